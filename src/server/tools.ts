import { invalidParams, isMcpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { shallowCopy } from "../utils/shallow-copy.js";
import { isThenable } from "../utils/thenable.js";
import { InputRequiredSignal, type TransportContext } from "./context.js";
import type { McpServer, RegisteredTool } from "./mcp-server.js";
import { toolError, toToolResult } from "./results.js";
import type { Validation } from "./schema.js";
import type { HandlerContext, ToolResult } from "./types.js";

/** The tool a `tools/call` names, and its arguments; InvalidParams when either is wrong. */
export function resolveTool(
  server: McpServer,
  params: JsonObject,
): { tool: RegisteredTool; args: JsonObject } {
  const name = params.name;
  const tool = typeof name === "string" ? server.tools.get(name) : undefined;
  if (!tool) throw invalidParams(`Unknown tool: ${String(name)}`);
  const args = params.arguments ?? {};
  if (!isObject(args)) throw invalidParams("Tool arguments must be an object");
  return { tool, args };
}

/**
 * Runs a tool: validates its arguments, calls its handler, validates its structured output.
 * Failures of the tool's own work are `isError` results; JSON-RPC errors are thrown (rejected).
 */
export async function runTool(
  tool: RegisteredTool,
  args: JsonObject,
  ctx: HandlerContext,
  env: TransportContext,
): Promise<JsonObject> {
  return runToolNow(tool, args, ctx, env);
}

/**
 * {@link runTool} without a promise where none is needed: a tool whose validators and handler
 * answer at once is answered at once (each promise resolved with a result costs a lookup of its
 * `then`, and each await a trip through the microtask queue). JSON-RPC errors may be thrown.
 */
export function runToolNow(
  tool: RegisteredTool,
  args: JsonObject,
  ctx: HandlerContext,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  if (!tool.input) return callHandler(tool, args, ctx, env);
  const validation = tool.input.validate(args);
  return isThenable(validation)
    ? Promise.resolve(validation).then((checked) => validated(tool, checked, ctx, env))
    : validated(tool, validation, ctx, env);
}

function validated(
  tool: RegisteredTool,
  checked: Validation,
  ctx: HandlerContext,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  if (!checked.ok)
    return toolError(`Invalid arguments for tool ${tool.options.name}: ${checked.message}`);
  return callHandler(tool, checked.value as JsonObject, ctx, env);
}

function callHandler(
  tool: RegisteredTool,
  input: JsonObject,
  ctx: HandlerContext,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  let returned: unknown;
  try {
    returned = tool.handler(input, ctx);
  } catch (error) {
    return failed(tool, error, env);
  }
  if (isThenable(returned)) {
    return Promise.resolve(returned).then(
      (value) => returnedResult(tool, value, ctx, env),
      (error: unknown) => failed(tool, error, env),
    );
  }
  return returnedResult(tool, returned, ctx, env);
}

/** What the handler returned, as a checked result (a value it cannot be is the tool's failure). */
function returnedResult(
  tool: RegisteredTool,
  value: unknown,
  ctx: HandlerContext,
  env: TransportContext,
): JsonObject | Promise<JsonObject> {
  // What the era decorates: a copy of the handler's own object (a handler may return the same
  // object every time); one made here from its text or value is the call's alone already.
  let made: WireResult;
  try {
    made = toToolResult(value, ctx.era);
  } catch (error) {
    return failed(tool, error, env);
  }
  const result = made === value ? shallowCopy(made) : made;
  if (!tool.output || result.isError) return result;
  const validation =
    result.structuredContent === undefined
      ? { ok: false as const, message: "no structured content" }
      : tool.output.validate(result.structuredContent);
  return isThenable(validation)
    ? Promise.resolve(validation).then((checked) => checkedOutput(tool, result, checked, env))
    : checkedOutput(tool, result, validation, env);
}

/** A tool result as a JSON object the era may add to. */
type WireResult = { [K in keyof ToolResult]: ToolResult[K] };

function checkedOutput(
  tool: RegisteredTool,
  result: WireResult,
  checked: Validation,
  env: TransportContext,
): JsonObject {
  if (!checked.ok) {
    const error = new Error(
      `Tool ${tool.options.name} returned invalid structured content: ${checked.message}`,
    );
    env.onError?.(error);
    return toolError(error.message);
  }
  return result;
}

/** A handler's failure: JSON-RPC errors, input requests and cancellation go on; the rest is the tool's. */
function failed(tool: RegisteredTool, error: unknown, env: TransportContext): JsonObject {
  if (error instanceof InputRequiredSignal || isMcpError(error) || env.abort.aborted) throw error;
  env.onError?.(error);
  const message = error instanceof Error ? error.message : String(error);
  return toolError(`Tool ${tool.options.name} failed: ${message}`);
}
