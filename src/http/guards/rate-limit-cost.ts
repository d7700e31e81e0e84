import type { JsonObject } from "../../protocol/messages.js";
import type { McpServer } from "../../server/mcp-server.js";
import type { AuthInfo } from "../../server/types.js";

/** What a cost function is told of the request it prices. */
export interface RateLimitedRequest {
  /** The JSON-RPC method (`tools/call`, `initialize`, ...). */
  method: string;
  /** The tool or prompt name, or the resource URI, when the method has one. */
  name?: string;
  params: JsonObject;
  /** The verified principal, with auth. */
  auth?: AuthInfo;
  /** The app's context for the request (the adapter's `context` option). */
  app?: unknown;
}

/**
 * Points per request, by what it acts on; the first that names a request prices it: the tool,
 * prompt or resource, then its method, then `default`. 0 makes a request free.
 */
export interface RateLimitCosts {
  /** Points of a `tools/call`, by tool name. */
  tools?: Record<string, number>;
  /** Points of a `prompts/get`, by prompt name. */
  prompts?: Record<string, number>;
  /** Points of a `resources/read`, by resource URI or by the URI template the read matches. */
  resources?: Record<string, number>;
  /** Points of a request by JSON-RPC method (`{ "tools/list": 0 }` makes listing free). */
  methods?: Record<string, number>;
  /** Points of any other request. @default 1 */
  default?: number;
}

/** Prices a request in points: a whole number, 0 for free. */
export type CostOf = (request: RateLimitedRequest) => number;

function checkedPoints(where: string, value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 0)
    throw new TypeError(`rateLimit: ${where} must be a whole number of points >= 0, got ${value}`);
  return value as number;
}

function table(kind: string, costs: Record<string, number> | undefined): Map<string, number> {
  const entries = Object.entries(costs ?? {});
  return new Map(
    entries.map(([key, points]) => [key, checkedPoints(`cost.${kind}.${key}`, points)]),
  );
}

/**
 * The pricing of `cost`, checked now (bad configuration throws at construction): a table becomes
 * lookups, a function is checked on each call.
 */
export function createCostOf(server: McpServer, cost: RateLimitCosts | CostOf | undefined): CostOf {
  if (typeof cost === "function")
    return (request) => checkedPoints(`cost(${request.method})`, cost(request));
  const tools = table("tools", cost?.tools);
  const prompts = table("prompts", cost?.prompts);
  const resources = table("resources", cost?.resources);
  const methods = table("methods", cost?.methods);
  const fallback = checkedPoints("cost.default", cost?.default ?? 1);
  const byName = (request: RateLimitedRequest): number | undefined => {
    const name = request.name;
    if (name === undefined) return undefined;
    if (request.method === "tools/call") return tools.get(name);
    if (request.method === "prompts/get") return prompts.get(name);
    if (request.method !== "resources/read" || resources.size === 0) return undefined;
    const direct = resources.get(name);
    if (direct !== undefined) return direct;
    for (const [uriTemplate, template] of server.templates)
      if (template.template.match(name)) return resources.get(uriTemplate);
    return undefined;
  };
  return (request) => byName(request) ?? methods.get(request.method) ?? fallback;
}
