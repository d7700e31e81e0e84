import { ErrorCode, invalidParams, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { MetaKey, SUPPORTED_VERSIONS } from "../protocol/versions.js";
import type { NonceStore } from "../store/types.js";
import { hasScopes, principalKey } from "./access.js";
import {
  createContext,
  type InputCollector,
  InputRequiredSignal,
  type RequestEnv,
} from "./context.js";
import { cacheHints, type McpServer } from "./mcp-server.js";
import { paginate } from "./pagination.js";
import { digestParams, type StateSealer } from "./request-state.js";
import { toPromptResult, toReadResult } from "./results.js";
import { declaresTasks, TASKS_EXTENSION, TASKS_REQUIRED } from "./task-shape.js";
import type { TaskRunner } from "./tasks.js";
import { resolveTool, runTool } from "./tools.js";
import type { CacheHints, Completer, HandlerContext } from "./types.js";

/** Per-handler machinery the dispatcher needs besides the server. */
export interface DispatchRuntime {
  sealer: StateSealer;
  nonces: NonceStore;
  /** Lifetime of a sealed `requestState`. */
  stateTtlMs: number;
  /** Claim every `requestState` once, across processes. */
  singleUseState: boolean;
  /** Runs tool calls as tasks (`io.modelcontextprotocol/tasks`); absent when disabled. */
  tasks?: TaskRunner;
}

/** One request as the dispatcher sees it. */
export interface DispatchRequest {
  id: RequestId;
  method: string;
  params: JsonObject;
}

type Handler = (
  server: McpServer,
  ctx: HandlerContext,
  params: JsonObject,
  env: RequestEnv,
  runtime: DispatchRuntime,
) => Promise<JsonObject>;

/** Methods that may answer `input_required` (spec: patterns/mrtr, supported requests). */
const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

function withCache(result: JsonObject, hints: CacheHints | undefined, env: RequestEnv): JsonObject {
  if (env.era !== "modern") return result;
  const applied = cacheHints(hints);
  // A list filtered by the caller's scopes must not be shared with other callers.
  if (env.hideUnauthorized) applied.cacheScope = "private";
  return Object.assign(result, applied);
}

/** The registrations a list shows to this caller. */
function visible<T extends { options: { scopes?: string[] } }>(
  items: Iterable<T>,
  env: RequestEnv,
): T[] {
  const all = [...items];
  if (!env.hideUnauthorized) return all;
  const granted = env.auth?.scopes ?? [];
  return all.filter((item) => hasScopes(granted, item.options.scopes));
}

function notFound(env: RequestEnv, uri: string): McpError {
  // Modern servers must not emit -32002 (spec: basic/index, error codes).
  return env.era === "modern"
    ? invalidParams(`Resource not found: ${uri}`, { uri })
    : new McpError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
}

const callTool: Handler = async (server, ctx, params, env, runtime) => {
  const { tool, args } = resolveTool(server, params);
  const support = env.era === "modern" && runtime.tasks ? tool.options.taskSupport : undefined;
  if (support !== undefined) {
    if (declaresTasks(env.clientCapabilities))
      return runtime.tasks!.run(tool, args, ctx, env, (toolCtx, toolEnv) =>
        runTool(tool, args, toolCtx, toolEnv),
      );
    if (support === "required")
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `Tool ${tool.options.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`,
        TASKS_REQUIRED,
      );
  }
  return runTool(tool, args, ctx, env);
};

const getPrompt: Handler = async (server, ctx, params) => {
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

const readResource: Handler = async (server, ctx, params, env) => {
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
  throw notFound(env, uri);
};

async function listResources(
  server: McpServer,
  ctx: HandlerContext,
  env: RequestEnv,
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

async function complete(
  server: McpServer,
  ctx: HandlerContext,
  params: JsonObject,
): Promise<JsonObject> {
  const ref = params.ref;
  const argument = params.argument;
  if (!isObject(ref) || !isObject(argument) || typeof argument.name !== "string") {
    throw invalidParams("completion/complete needs ref and argument.name");
  }
  const context =
    isObject(params.context) && isObject(params.context.arguments) ? params.context.arguments : {};
  let completer: Completer | undefined;
  if (ref.type === "ref/prompt") {
    const prompt = typeof ref.name === "string" ? server.prompts.get(ref.name) : undefined;
    if (!prompt) throw invalidParams(`Unknown prompt: ${String(ref.name)}`);
    completer = prompt.options.arguments?.find((a) => a.name === argument.name)?.complete;
  } else if (ref.type === "ref/resource") {
    const template = typeof ref.uri === "string" ? server.templates.get(ref.uri) : undefined;
    if (!template && !(typeof ref.uri === "string" && server.resources.has(ref.uri))) {
      throw invalidParams(`Unknown resource template: ${String(ref.uri)}`);
    }
    completer = template?.options.complete?.[argument.name];
  } else {
    throw invalidParams(`Unknown completion reference type: ${String(ref.type)}`);
  }
  const value = typeof argument.value === "string" ? argument.value : "";
  const values = completer
    ? await completer(value, { arguments: context as Record<string, string>, ctx })
    : [];
  const completion: JsonObject = {
    values: values.slice(0, 100),
    total: values.length,
    hasMore: values.length > 100,
  };
  return { completion };
}

const HANDLERS: Record<string, Handler> = {
  "server/discover": async (server, _ctx, _params, env, runtime) => {
    const capabilities = server.capabilities();
    if (runtime.tasks) capabilities.extensions = { [TASKS_EXTENSION]: {} };
    const result: JsonObject = { supportedVersions: [...SUPPORTED_VERSIONS], capabilities };
    if (server.instructions !== undefined) result.instructions = server.instructions;
    return withCache(result, server.cache.discover, env);
  },
  "tools/list": async (server, _ctx, params, env) => {
    const page = paginate(visible(server.tools.values(), env), params.cursor, server.pageSize);
    const result: JsonObject = { tools: page.items.map((tool) => tool.definition) };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return withCache(result, server.cache.tools, env);
  },
  "tools/call": callTool,
  "prompts/list": async (server, _ctx, params, env) => {
    const page = paginate(visible(server.prompts.values(), env), params.cursor, server.pageSize);
    const result: JsonObject = { prompts: page.items.map((prompt) => prompt.definition) };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return withCache(result, server.cache.prompts, env);
  },
  "prompts/get": getPrompt,
  "resources/list": async (server, ctx, params, env) => {
    const page = paginate(await listResources(server, ctx, env), params.cursor, server.pageSize);
    const result: JsonObject = { resources: page.items };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return withCache(result, server.cache.resources, env);
  },
  "resources/templates/list": async (server, _ctx, params, env) => {
    const page = paginate(visible(server.templates.values(), env), params.cursor, server.pageSize);
    const result: JsonObject = { resourceTemplates: page.items.map((t) => t.definition) };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return withCache(result, server.cache.resourceTemplates, env);
  },
  "resources/read": readResource,
  "completion/complete": complete,
  "tasks/get": (_server, _ctx, params, env, runtime) =>
    taskRunner(env, runtime).get(taskIdOf(params), env),
  "tasks/update": (_server, _ctx, params, env, runtime) => {
    const responses = params.inputResponses;
    if (!isObject(responses)) throw invalidParams("inputResponses must be an object");
    return taskRunner(env, runtime).update(taskIdOf(params), responses, env);
  },
  "tasks/cancel": (_server, _ctx, params, env, runtime) =>
    taskRunner(env, runtime).cancel(taskIdOf(params), env),
};

/** The task runner for a tasks/* request: modern era, enabled, and the extension declared. */
function taskRunner(env: RequestEnv, runtime: DispatchRuntime): TaskRunner {
  if (env.era !== "modern" || !runtime.tasks)
    throw new McpError(ErrorCode.MethodNotFound, "Method not found: tasks are not enabled");
  if (!declaresTasks(env.clientCapabilities))
    throw new McpError(
      ErrorCode.MissingRequiredClientCapability,
      `The client did not declare the ${TASKS_EXTENSION} extension`,
      TASKS_REQUIRED,
    );
  return runtime.tasks;
}

function taskIdOf(params: JsonObject): string {
  if (typeof params.taskId !== "string" || params.taskId === "")
    throw invalidParams("taskId must be a non-empty string");
  return params.taskId;
}

/** True when the server has a handler for `method` in this era. */
export function hasMethod(server: McpServer, method: string): boolean {
  return method in HANDLERS || server.methods.has(method);
}

async function restoreState(
  runtime: DispatchRuntime,
  request: DispatchRequest,
  env: RequestEnv,
): Promise<{ inputs: InputCollector; state: JsonObject }> {
  const { requestState, inputResponses } = request.params;
  if (inputResponses !== undefined && !isObject(inputResponses)) {
    throw invalidParams("inputResponses must be an object");
  }
  const responses: JsonObject = {};
  let state: JsonObject = {};
  if (requestState !== undefined) {
    const payload =
      typeof requestState === "string" ? await runtime.sealer.open(requestState) : undefined;
    // One answer for every failure, so a probe learns nothing about why (PROTOCOL §2.4).
    const invalid = () => invalidParams("Invalid or expired requestState");
    if (!payload || payload.expires < Date.now()) throw invalid();
    if (payload.principal !== principalKey(env.auth) || payload.method !== request.method)
      throw invalid();
    if (payload.digest !== (await digestParams(request.params))) throw invalid();
    if (
      payload.nonce !== undefined &&
      !(await runtime.nonces.claim(`state:${payload.nonce}`, runtime.stateTtlMs))
    ) {
      throw invalid();
    }
    Object.assign(responses, payload.responses);
    state = isObject(payload.state) ? payload.state : {};
  }
  if (inputResponses) Object.assign(responses, inputResponses);
  return { inputs: { responses, pending: {} }, state };
}

async function inputRequired(
  runtime: DispatchRuntime,
  request: DispatchRequest,
  env: RequestEnv,
  inputs: InputCollector,
  state: JsonObject,
): Promise<JsonObject> {
  const requestState = await runtime.sealer.seal({
    principal: principalKey(env.auth),
    method: request.method,
    digest: await digestParams(request.params),
    expires: Date.now() + runtime.stateTtlMs,
    nonce: runtime.singleUseState ? crypto.randomUUID() : undefined,
    responses: inputs.responses,
    state,
  });
  return { resultType: "input_required", inputRequests: inputs.pending, requestState };
}

/**
 * Runs one request against the server and returns its result, decorated for the era
 * (`resultType`, serverInfo, cache hints). Throws {@link McpError} for JSON-RPC errors.
 */
export async function dispatch(
  server: McpServer,
  runtime: DispatchRuntime,
  request: DispatchRequest,
  env: RequestEnv,
): Promise<JsonObject> {
  const handler = HANDLERS[request.method];
  const custom = handler ? undefined : server.methods.get(request.method);
  if (!handler && !custom) {
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
  }
  const multiRound = env.era === "modern" && !env.request && MRTR_METHODS.has(request.method);
  const restored = multiRound ? await restoreState(runtime, request, env) : undefined;
  const ctx = createContext(env, request, restored?.inputs, restored?.state ?? {});
  let result: JsonObject;
  try {
    result = handler
      ? await handler(server, ctx, request.params, env, runtime)
      : await custom!(request.params, ctx);
  } catch (error) {
    if (restored && Object.keys(restored.inputs.pending).length > 0) {
      return finish(
        server,
        await inputRequired(runtime, request, env, restored.inputs, ctx.state),
        env,
      );
    }
    if (error instanceof InputRequiredSignal) {
      throw new McpError(
        ErrorCode.InternalError,
        "Input was requested outside a multi round-trip request",
      );
    }
    if (isMcpError(error)) throw error;
    env.onError?.(error);
    throw new McpError(ErrorCode.InternalError, "Internal error");
  }
  if (restored && Object.keys(restored.inputs.pending).length > 0) {
    return finish(
      server,
      await inputRequired(runtime, request, env, restored.inputs, ctx.state),
      env,
    );
  }
  if (request.method === "resources/read") {
    const uri = request.params.uri as string;
    const hints =
      server.resources.get(uri)?.options ??
      [...server.templates.values()].find((t) => t.template.match(uri))?.options;
    withCache(result, hints, env);
  }
  return finish(server, result, env);
}

/** One `_meta` per server for results that carry no `_meta` of their own. */
const serverMetas = new WeakMap<McpServer, JsonObject>();

function finish(server: McpServer, result: JsonObject, env: RequestEnv): JsonObject {
  if (env.era !== "modern") return result;
  result.resultType ??= "complete";
  let meta = serverMetas.get(server);
  if (!meta) {
    meta = Object.freeze({ [MetaKey.serverInfo]: server.info });
    serverMetas.set(server, meta);
  }
  result._meta = isObject(result._meta) ? { ...result._meta, ...meta } : meta;
  return result;
}
