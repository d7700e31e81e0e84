import { ErrorCode, invalidParams, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { SUPPORTED_VERSIONS } from "../protocol/versions.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { isThenable } from "../utils/thenable.js";
import { hasScopes } from "./access.js";
import { complete } from "./completion.js";
import { createContext, InputRequiredSignal, type TransportContext } from "./context.js";
import { type EraPolicy, eraPolicy } from "./era-policy.js";
import { declarationsOf, extensionFor, type ServerExtension, type ToolCall } from "./extension.js";
import type { McpServer } from "./mcp-server.js";
import {
  inputRequiredResult,
  needsInput,
  openRound,
  type Round,
  type RoundStateOptions,
} from "./multi-round.js";
import { paginate } from "./pagination.js";
import { toPromptResult, toReadResult } from "./results.js";
import { resolveTool, runToolNow } from "./tools.js";
import { tracedTransport } from "./traced-transport.js";
import type { CacheHints, HandlerContext } from "./types.js";

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
interface MethodCall {
  server: McpServer;
  ctx: HandlerContext;
  params: JsonObject;
  env: TransportContext;
  services: DispatchServices;
  /** What the request's era does differently. */
  era: EraPolicy;
}

type Handler = (call: MethodCall) => JsonObject | Promise<JsonObject>;

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
  const listed = visible(server.resources.values(), env).map((resource) => resource.definition);
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

const HANDLERS: Record<string, Handler> = {
  "server/discover": async ({ server, env, services, era }) => {
    const capabilities = server.capabilities();
    const declared = declarationsOf(services.extensions ?? [], "modern");
    if (declared) capabilities.extensions = declared;
    const result: JsonObject = { supportedVersions: [...SUPPORTED_VERSIONS], capabilities };
    if (server.instructions !== undefined) result.instructions = server.instructions;
    return era.withCache(result, server.cache.discover, env);
  },
  "tools/list": async ({ server, params, env, era }) => {
    const page = paginate(visible(server.tools.values(), env), params.cursor, server.pageSize);
    const result: JsonObject = { tools: page.items.map((tool) => tool.definition) };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return era.withCache(result, server.cache.tools, env);
  },
  "tools/call": callTool,
  "prompts/list": async ({ server, params, env, era }) => {
    const page = paginate(visible(server.prompts.values(), env), params.cursor, server.pageSize);
    const result: JsonObject = { prompts: page.items.map((prompt) => prompt.definition) };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return era.withCache(result, server.cache.prompts, env);
  },
  "prompts/get": getPrompt,
  "resources/list": async ({ server, ctx, params, env, era }) => {
    const page = paginate(await listResources(server, ctx, env), params.cursor, server.pageSize);
    const result: JsonObject = { resources: page.items };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return era.withCache(result, server.cache.resources, env);
  },
  "resources/templates/list": async ({ server, params, env, era }) => {
    const page = paginate(visible(server.templates.values(), env), params.cursor, server.pageSize);
    const result: JsonObject = { resourceTemplates: page.items.map((t) => t.definition) };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return era.withCache(result, server.cache.resourceTemplates, env);
  },
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
function handlerOf(
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
function resourceHints(server: McpServer, uri: string): CacheHints | undefined {
  return (
    server.resources.get(uri)?.options ??
    [...server.templates.values()].find((t) => t.template.match(uri))?.options
  );
}

/** A handler's failure as the client sees it: JSON-RPC errors as they are, the rest internal. */
function toWireError(error: unknown, env: TransportContext): McpError {
  if (error instanceof InputRequiredSignal) {
    return new McpError(
      ErrorCode.InternalError,
      "Input was requested outside a multi round-trip request",
    );
  }
  if (isMcpError(error)) return error;
  env.onError?.(error);
  return new McpError(ErrorCode.InternalError, "Internal error");
}

/**
 * Propagate mode's message that carried no trace context has no operation of ours (it runs in the
 * context active when it arrived), but what its handler asks the client still carries that context.
 */
function propagating(telemetry: Telemetry | undefined, env: TransportContext): TransportContext {
  return telemetry && !telemetry.full && env.request && telemetry.live
    ? tracedTransport(telemetry, env)
    : env;
}

/**
 * Runs one request against the server and returns its result, decorated for the era
 * (`resultType`, serverInfo, cache hints). Rejects with {@link McpError} for JSON-RPC errors.
 * With telemetry, the request's span is the active context while its handler runs, and ends
 * with its answer.
 */
export function dispatch(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
): Promise<JsonObject> {
  try {
    return Promise.resolve(dispatchNow(server, services, request, env));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * {@link dispatch} without a promise where none is needed: a handler that answers at once (a
 * tool whose validators and handler are synchronous) is answered at once, and a JSON-RPC error
 * may be thrown rather than rejected. Each promise resolved with a result costs a lookup of its
 * `then`, and each await a trip through the microtask queue, on every request.
 */
export function dispatchNow(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  const operation = env.operation;
  if (!operation) return answer(server, services, request, propagating(services.telemetry, env));
  operation.claim();
  operation.describe(env.era, env.protocolVersion, env.sessionId);
  const traced = tracedTransport(services.telemetry, env);
  const ended = (result: JsonObject) => {
    operation.end({ result });
    return result;
  };
  const failed = (error: unknown): never => {
    operation.end(isMcpError(error) ? { error } : { exception: error });
    throw error;
  };
  let answered: JsonObject | Promise<JsonObject>;
  try {
    answered = operation.run(() => answer(server, services, request, traced));
  } catch (error) {
    return failed(error);
  }
  return isThenable(answered) ? answered.then(ended, failed) : ended(answered);
}

function answer(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  const handler = handlerOf(server, services, request.method);
  if (!handler) {
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
  }
  const era = eraPolicy(env.era);
  const opened = era.multiRound(request.method, env)
    ? openRound(services, request, env)
    : undefined;
  // A first round is known at once: only a retry's redeeming is waited for.
  return isThenable(opened)
    ? opened.then((round) => inRound(server, services, request, env, era, handler, round))
    : inRound(server, services, request, env, era, handler, opened);
}

/** Runs the handler in `round` (none outside multi round-trips) and decorates its result. */
function inRound(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
  era: EraPolicy,
  handler: Handler,
  round: Round | undefined,
): JsonObject | Promise<JsonObject> {
  if (round) env.operation?.round(round.number, round.previous);
  const ctx = createContext(env, request, round?.inputs, round?.state ?? {});
  const call: MethodCall = { server, ctx, params: request.params, env, services, era };
  let returned: JsonObject | Promise<JsonObject>;
  try {
    returned = handler(call);
  } catch (error) {
    return handlerFailed(call, request, round, error);
  }
  // Promise.resolve: a thenable of someone else's may not answer with a promise of its own.
  return isThenable(returned)
    ? Promise.resolve(returned).then(
        (result) => decorated(call, request, round, result),
        (error: unknown) => handlerFailed(call, request, round, error),
      )
    : decorated(call, request, round, returned);
}

/** The handler's result for the wire, or, when it asked for missing inputs, the round's end. */
function decorated(
  { server, env, services, era, ctx }: MethodCall,
  request: DispatchRequest,
  round: Round | undefined,
  result: JsonObject,
): JsonObject | Promise<JsonObject> {
  if (needsInput(round)) return askForInputs(server, services, request, env, era, round, ctx);
  if (request.method === "resources/read")
    era.withCache(result, resourceHints(server, request.params.uri as string), env);
  return era.decorate(server, result);
}

function handlerFailed(
  { server, env, services, era, ctx }: MethodCall,
  request: DispatchRequest,
  round: Round | undefined,
  error: unknown,
): Promise<JsonObject> {
  // A handler that asked for missing inputs ends the round, whatever it threw.
  if (!needsInput(round)) throw toWireError(error, env);
  return askForInputs(server, services, request, env, era, round, ctx);
}

async function askForInputs(
  server: McpServer,
  services: DispatchServices,
  request: DispatchRequest,
  env: TransportContext,
  era: EraPolicy,
  round: Round,
  ctx: HandlerContext,
): Promise<JsonObject> {
  env.operation?.inputRequired(Object.keys(round.inputs.pending));
  const asked = await inputRequiredResult(services, request, env, round, ctx.state);
  return era.decorate(server, asked);
}
