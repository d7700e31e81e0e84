import { invalidParams, isMcpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { shallowCopy } from "../utils/shallow-copy.js";
import { isThenable } from "../utils/thenable.js";
import { InputRequiredSignal, type TransportContext } from "./context.js";
import type { McpServer, RegisteredTool } from "./mcp-server.js";
import { toolError, toToolResult } from "./results.js";
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
 * Failures of the tool's own work are `isError` results; JSON-RPC errors are thrown.
 */
export async function runTool(
  tool: RegisteredTool,
  args: JsonObject,
  ctx: HandlerContext,
  env: TransportContext,
): Promise<JsonObject> {
  let input: unknown = args;
  if (tool.input) {
    // Awaited only when it is a promise: most validators and handlers answer at once, and each
    // await is a trip through the microtask queue on every call.
    const validation = tool.input.validate(args);
    const checked = isThenable(validation) ? await validation : validation;
    if (!checked.ok)
      return toolError(`Invalid arguments for tool ${tool.options.name}: ${checked.message}`);
    input = checked.value;
  }
  let result: ToolResult;
  try {
    const returned = tool.handler(input as JsonObject, ctx);
    result = toToolResult(isThenable(returned) ? await returned : returned, ctx.era);
  } catch (error) {
    if (error instanceof InputRequiredSignal || isMcpError(error) || env.abort.aborted) throw error;
    env.onError?.(error);
    const message = error instanceof Error ? error.message : String(error);
    return toolError(`Tool ${tool.options.name} failed: ${message}`);
  }
  if (tool.output && !result.isError) {
    const validation =
      result.structuredContent === undefined
        ? { ok: false as const, message: "no structured content" }
        : tool.output.validate(result.structuredContent);
    const checked = isThenable(validation) ? await validation : validation;
    if (!checked.ok) {
      const error = new Error(
        `Tool ${tool.options.name} returned invalid structured content: ${checked.message}`,
      );
      env.onError?.(error);
      return toolError(error.message);
    }
  }
  // A copy: the era decorates it, and a handler may return the same object every time.
  return shallowCopy(result);
}
