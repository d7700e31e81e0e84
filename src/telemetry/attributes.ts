import type { Attributes } from "@opentelemetry/api";
import type { JsonObject } from "../protocol/messages.js";

/**
 * The attributes of the OpenTelemetry semantic conventions for MCP (`docs/gen-ai/mcp.md`,
 * status: development) that this package records.
 */
export const McpAttributes = {
  methodName: "mcp.method.name",
  protocolVersion: "mcp.protocol.version",
  sessionId: "mcp.session.id",
  resourceUri: "mcp.resource.uri",
  requestId: "jsonrpc.request.id",
  toolName: "gen_ai.tool.name",
  promptName: "gen_ai.prompt.name",
  operationName: "gen_ai.operation.name",
  statusCode: "rpc.response.status_code",
  errorType: "error.type",
  networkTransport: "network.transport",
  networkProtocolName: "network.protocol.name",
  clientAddress: "client.address",
  clientPort: "client.port",
  serverAddress: "server.address",
  serverPort: "server.port",
} as const;

/** Attributes of our own, beyond the conventions: named under the package's namespace. */
export const OwnAttributes = {
  /** `modern` (2026-07-28) or `legacy`. */
  era: "mcp_mount.era",
  /** A result that is not final: `input_required` (a multi round-trip round) or `task`. */
  resultType: "mcp_mount.result_type",
  /** The round of a multi round-trip request (1 for the first). */
  round: "mcp_mount.round",
  /** The keys of the inputs an `input_required` answer asks for. */
  inputKeys: "mcp_mount.input_keys",
  /** The task a call created or a run works on. */
  taskId: "mcp_mount.task.id",
} as const;

/** `error.type` for a tool result with `isError` (conventions: error.type, note 1). */
export const TOOL_ERROR = "tool_error";

/** Bucket boundaries, in seconds, the conventions give every MCP duration histogram. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** What an MCP message is about, named for a span and its low-cardinality attributes. */
export interface Operation {
  /** `{mcp.method.name} {target}`, the target a tool or prompt name when there is one. */
  spanName: string;
  /** The attributes every span and metric of the operation carries. */
  attributes: Attributes;
}

/**
 * Names an operation: the span name takes a tool or prompt name as its target, never a resource
 * URI (high cardinality; conventions: span name), which is an attribute of the span only.
 */
export function describeOperation(method: string, params: JsonObject | undefined): Operation {
  // Object literals with their keys written out: built on every request, they stay fast objects
  // (computed keys and spreads made this the dearest part of a traced request).
  const name = params?.name;
  if (method === "tools/call" && typeof name === "string") {
    return {
      spanName: `${method} ${name}`,
      attributes: {
        "mcp.method.name": method,
        "gen_ai.tool.name": name,
        "gen_ai.operation.name": "execute_tool",
      },
    };
  }
  if (method === "prompts/get" && typeof name === "string") {
    return {
      spanName: `${method} ${name}`,
      attributes: { "mcp.method.name": method, "gen_ai.prompt.name": name },
    };
  }
  return { spanName: method, attributes: { "mcp.method.name": method } };
}

/** The resource URI a message names, for the span (the metrics leave it out: opt-in there). */
export function resourceUriOf(method: string, params: JsonObject | undefined): string | undefined {
  if (!method.startsWith("resources/") && method !== "notifications/resources/updated")
    return undefined;
  const uri = params?.uri;
  return typeof uri === "string" ? uri : undefined;
}

/** How an operation ended, as far as telemetry cares. */
export interface Outcome {
  /** The JSON-RPC error it answered with. */
  error?: { code: number; message: string };
  /** The result, when it answered with one. */
  result?: JsonObject;
  /** Something failed on our side before or besides the answer (a store outage, a crash). */
  exception?: unknown;
}

/** The conventions' `error.type` and `rpc.response.status_code` of an outcome, if it failed. */
export function failureOf(outcome: Outcome): { type: string; code?: string; message?: string } {
  if (outcome.error) {
    const code = String(outcome.error.code);
    return { type: code, code, message: outcome.error.message };
  }
  if (outcome.result?.isError === true) return { type: TOOL_ERROR };
  if (outcome.exception !== undefined) return { type: exceptionType(outcome.exception) };
  return { type: "" };
}

function exceptionType(exception: unknown): string {
  return exception instanceof Error ? exception.constructor.name : "_OTHER";
}
