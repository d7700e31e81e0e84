import { ErrorCode, McpError } from "../../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResult,
} from "../../protocol/messages.js";
import { isRequest, isResponse } from "../../protocol/messages.js";
import { LEGACY_VERSIONS } from "../../protocol/versions.js";
import {
  initializeParamsError,
  initializeResult,
  negotiateVersion,
} from "../../server/initialize.js";
import type { EndpointServices } from "../endpoint-services.js";
import { errorResponse, jsonResponse } from "../responses.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";

/** A message a legacy client POSTs. */
export type LegacyMessage =
  | JsonRpcRequest
  | JsonRpcNotification
  | JsonRpcResult
  | JsonRpcErrorResponse;

/** A legacy message sorted by what it is. */
export type SortedMessage =
  | { kind: "initialize"; request: JsonRpcRequest }
  | { kind: "reply"; reply: JsonRpcResult | JsonRpcErrorResponse }
  | { kind: "notification"; notification: JsonRpcNotification }
  | { kind: "request"; request: JsonRpcRequest };

/** What a message is; `initialize` sent as a notification is refused (a 400). */
export function sortMessage(message: LegacyMessage): SortedMessage | McpHttpResponse {
  const json = message as unknown as JsonObject;
  if ("method" in message && message.method === "initialize") {
    if (!isRequest(json)) return sessionError(400, "initialize must be a request");
    return { kind: "initialize", request: message as JsonRpcRequest };
  }
  if (isResponse(json))
    return { kind: "reply", reply: message as JsonRpcResult | JsonRpcErrorResponse };
  if (!("id" in message))
    return { kind: "notification", notification: message as JsonRpcNotification };
  return { kind: "request", request: message as JsonRpcRequest };
}

/** True when `sorted` is an answer already, not a message to serve. */
export function isAnswer(sorted: SortedMessage | McpHttpResponse): sorted is McpHttpResponse {
  return "status" in sorted;
}

/** The id of a request, to echo in errors; undefined for notifications and responses. */
export function requestIdOf(message: LegacyMessage): JsonRpcRequest["id"] | undefined {
  return "id" in message && !isResponse(message as unknown as JsonObject)
    ? (message as JsonRpcRequest).id
    : undefined;
}

/** A 400 or 404 about the session (or its absence), as a JSON-RPC error. */
export function sessionError(
  status: 400 | 404,
  message: string,
  id?: JsonRpcRequest["id"],
): McpHttpResponse {
  return errorResponse(status, new McpError(ErrorCode.InvalidRequest, message), { id });
}

/**
 * 429 to an `initialize` from a client at `maxSessionsPerClient` whose sessions beyond it are
 * all active (a stream open, a request running): none can end for the new one.
 */
export function tooManySessions(id?: JsonRpcRequest["id"]): McpHttpResponse {
  const message =
    "Too many sessions for this client, every one of them active; end one first (DELETE)";
  return errorResponse(429, new McpError(ErrorCode.InternalError, message), {
    id,
    headers: { "retry-after": "5" },
  });
}

/** 400 when the request names a protocol version this era does not speak. */
export function versionHeaderError(
  req: McpHttpRequest,
  id?: JsonRpcRequest["id"],
): McpHttpResponse | undefined {
  const version = req.header("mcp-protocol-version");
  if (version === null || LEGACY_VERSIONS.includes(version)) return undefined;
  const error = new McpError(
    ErrorCode.InvalidRequest,
    `Unsupported MCP-Protocol-Version: ${version}`,
  );
  return errorResponse(400, error, { id });
}

/** 503 for a request that arrived while the handler drains. */
export function shuttingDown(id: JsonRpcRequest["id"]): McpHttpResponse {
  return errorResponse(503, new McpError(ErrorCode.InternalError, "Server is shutting down"), {
    id,
    headers: { "retry-after": "1", connection: "close" },
  });
}

/**
 * Answers `initialize`: checks its params, negotiates the version, and, when `openSession` is
 * given, opens a session and names it in `Mcp-Session-Id` (PROTOCOL §3, lifecycle).
 */
export async function answerInitialize(
  core: EndpointServices,
  request: JsonRpcRequest,
  openSession?: (params: JsonObject, protocolVersion: string) => Promise<string>,
): Promise<McpHttpResponse> {
  const params = request.params ?? {};
  const invalid = initializeParamsError(params);
  if (invalid) return errorResponse(400, invalid, { id: request.id });
  const protocolVersion = negotiateVersion(params.protocolVersion);
  const result = initializeResult(core.server, protocolVersion, core.dispatchServices.extensions);
  const headers: Record<string, string> = {};
  if (openSession) headers["mcp-session-id"] = await openSession(params, protocolVersion);
  core.observe?.({
    era: "legacy",
    method: "initialize",
    params,
    started: performance.now(),
    status: 200,
  });
  return jsonResponse(200, { jsonrpc: "2.0", id: request.id, result }, headers);
}
