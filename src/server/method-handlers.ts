import { invalidParams } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { SUPPORTED_VERSIONS } from "../protocol/versions.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { hasScopes } from "./access.js";
import { complete } from "./completion.js";
import type { TransportContext } from "./context.js";
import type { EraPolicy } from "./era-policy.js";
import { declarationsOf, extensionFor, type ServerExtension, type ToolCall } from "./extension.js";
import type { McpServer } from "./mcp-server.js";
import type { RoundStateOptions } from "./multi-round.js";
import { paginate } from "./pagination.js";
import { toPromptResult, toReadResult } from "./results.js";
import { resolveTool, runToolNow } from "./tools.js";
import type { CacheHints, HandlerContext } from "./types.js";

// What serves each method: the core handlers, an extension's, or the server's custom method
// (dispatch.ts runs them).

/** Per-handler machinery the dispatcher needs besides the server. */
export interface DispatchServices extends RoundStateOptions {
  /** The extensions that serve methods and may take over tool calls (tasks). @default [] */
  extensions?: readonly ServerExtension[];
  /** Spans and metrics (OpenTelemetry); none when off. */
  telemetry?: Telemetry;
}

/** One request as the dispatcher sees it. */
export interface DispatchRequest {
  id: RequestId;
  method: string;
  params: JsonObject;
}

/** Everything a method's handler gets for one request. */
export interface MethodCall {
  server: McpServer;
  ctx: HandlerContext;
  params: JsonObject;
  env: TransportContext;
  services: DispatchServices;
  /** What the request's era does differently. */
  era: EraPolicy;
}

export type Handler = (call: MethodCall) => JsonObject | Promise<JsonObject>;

/** The registrations a list shows to this caller. */
function visible<T extends { options: { scopes?: string[] } }>(
  items: Iterable<T>,
  env: TransportContext,
): T[] {
  const all = [...items];
  if (!env.hideUnauthorized) return all;
  const granted = env.auth?.scopes ?? [];
  return all.filter((item) => hasScopes(granted, item.options.scopes));
}

// Not async: it hands on what runToolNow answers (a result, or a promise of one only when the tool
// needs it) or an extension's promise; inRound() calls it inside its try, so a synchronous throw
// is handled there as a rejection would be.
const callTool: Handler = (call) => {
  const { tool, args } = resolveTool(call.server, call.params);
  // The call itself, completed, rather than a copy (or Object.assign): on every tools/call.
  const toolCall = call as MethodCall & ToolCall;
  toolCall.tool = tool;
  toolCall.args = args;
  for (const extension of call.services.extensions ?? []) {
    const takenOver = extension.callTool?.(toolCall);
    if (takenOver) return takenOver;
  }
  return runToolNow(tool, args, call.ctx, call.env);
};

const getPrompt: Handler = async ({ server, ctx, params }) => {
  const name = params.name;
  const prompt = typeof name === "string" ? server.prompts.get(name) : undefined;
  if (!prompt) throw invalidParams(`Unknown prompt: ${String(name)}`);
  const args = params.arguments ?? {};
  if (!isObject(args) || Object.values(args).some((value) => typeof value !== "string")) {
    throw invalidParams("Prompt arguments must be an object of strings");
  }
  const missing = (prompt.options.arguments ?? []).filter(
    (a) => a.required && args[a.name] === undefined,
  );
  if (missing.length > 0) {
    throw invalidParams(`Missing required arguments: ${missing.map((a) => a.name).join(", ")}`);
  }
  return toPromptResult(await prompt.handler(args as Record<string, string>, ctx));
};

const readResource: Handler = async ({ server, ctx, params, era }) => {
  const uri = params.uri;
  if (typeof uri !== "string") throw invalidParams("uri must be a string");
  const resource = server.resources.get(uri);
  if (resource) {
    const value = await resource.handler(uri, ctx);
    return toReadResult(value, uri, resource.options.mimeType);
  }
  for (const template of server.templates.values()) {
    const variables = template.template.match(uri);
    if (!variables) continue;
    const value = await template.handler(uri, variables, ctx);
    return toReadResult(value, uri, template.options.mimeType);
  }
  throw era.notFound(uri);
};

async function listResources(
  server: McpServer,
  ctx: HandlerContext,
  env: TransportContext,
): Promise<JsonObject[]> {
  const listed = shown(server.resources.values(), env);
  for (const template of visible(server.templates.values(), env)) {
    if (!template.options.list) continue;
    for (const item of await template.options.list(ctx)) {
      const { scopes, ttlMs, cacheScope, ...definition } = item;
      if (env.hideUnauthorized && !hasScopes(env.auth?.scopes ?? [], scopes)) continue;
      listed.push(definition as JsonObject);
    }
  }
  return listed;
}

/** One page of a list result under `key`, with the next page's cursor and the list's cache hints. */
function listPage(
  { server, params, env, era }: MethodCall,
  key: string,
  items: readonly JsonObject[],
  hints: CacheHints | undefined,
): JsonObject {
  const page = paginate(items, params.cursor, server.pageSize);
  const result: JsonObject = { [key]: page.items };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return era.withCache(result, hints, env);
}

/** The definitions of the registrations a list shows to this caller. */
function shown(
  items: Iterable<{ definition: JsonObject; options: { scopes?: string[] } }>,
  env: TransportContext,
): JsonObject[] {
  return visible(items, env).map((item) => item.definition);
}

const HANDLERS: Record<string, Handler> = {
  "server/discover": async ({ server, env, services, era }) => {
    const capabilities = server.capabilities();
    const declared = declarationsOf(services.extensions ?? [], "modern");
    if (declared) capabilities.extensions = declared;
    const result: JsonObject = { supportedVersions: [...SUPPORTED_VERSIONS], capabilities };
    if (server.instructions !== undefined) result.instructions = server.instructions;
    return era.withCache(result, server.cache.discover, env);
  },
  "tools/list": async (call) =>
    listPage(call, "tools", shown(call.server.tools.values(), call.env), call.server.cache.tools),
  "tools/call": callTool,
  "prompts/list": async (call) =>
    listPage(
      call,
      "prompts",
      shown(call.server.prompts.values(), call.env),
      call.server.cache.prompts,
    ),
  "prompts/get": getPrompt,
  "resources/list": async (call) =>
    listPage(
      call,
      "resources",
      await listResources(call.server, call.ctx, call.env),
      call.server.cache.resources,
    ),
  "resources/templates/list": async (call) =>
    listPage(
      call,
      "resourceTemplates",
      shown(call.server.templates.values(), call.env),
      call.server.cache.resourceTemplates,
    ),
  "resources/read": readResource,
  "completion/complete": ({ server, ctx, params }) => complete(server, ctx, params),
};

/** True when the server, or one of `extensions`, has a handler for `method`. */
export function hasMethod(
  server: McpServer,
  method: string,
  extensions: readonly ServerExtension[] = [],
): boolean {
  return (
    method in HANDLERS ||
    extensionFor(extensions, method) !== undefined ||
    server.methods.has(method)
  );
}

/** What serves `method`: a core handler, an extension's, or the server's custom method. */
export function handlerOf(
  server: McpServer,
  services: DispatchServices,
  method: string,
): Handler | undefined {
  const core = HANDLERS[method];
  if (core) return core;
  const extension = extensionFor(services.extensions ?? [], method)?.methods?.[method];
  if (extension) return extension;
  const custom = server.methods.get(method);
  return custom && (async ({ params, ctx }) => custom(params, ctx));
}

/** The cache hints of the resource or template that served `uri`. */
export function resourceHints(server: McpServer, uri: string): CacheHints | undefined {
  return (
    server.resources.get(uri)?.options ??
    [...server.templates.values()].find((t) => t.template.match(uri))?.options
  );
}
