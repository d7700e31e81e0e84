import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonRpcRequest } from "../../protocol/messages.js";
import { isLogLevel } from "../../protocol/versions.js";
import type { SessionRecord } from "../../store/types.js";
import { errorResponse } from "../responses.js";
import type { McpHttpResponse } from "../types.js";
import { emptyResult } from "./incoming.js";

const SESSION_METHODS = new Set([
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

/** True for the methods a legacy session answers itself, from its own state. */
export function isSessionMethod(method: string): boolean {
  return SESSION_METHODS.has(method);
}

/** A session method's answer, and the change to the session's record it makes. */
export interface SessionMethodOutcome {
  response: McpHttpResponse;
  change?: Partial<Pick<SessionRecord, "logLevel" | "subscriptions">>;
}

/** Answers a session method against `record`, which it updates in place. */
export function applySessionMethod(
  record: Pick<SessionRecord, "logLevel" | "subscriptions">,
  request: JsonRpcRequest,
): SessionMethodOutcome {
  const params = request.params ?? {};
  const invalid = (message: string) => ({
    response: errorResponse(200, new McpError(ErrorCode.InvalidParams, message), {
      id: request.id,
    }),
  });
  if (request.method === "ping") return { response: emptyResult(request.id) };
  if (request.method === "logging/setLevel") {
    if (!isLogLevel(params.level)) return invalid(`Unknown log level: ${String(params.level)}`);
    record.logLevel = params.level;
    return { response: emptyResult(request.id), change: { logLevel: params.level } };
  }
  if (typeof params.uri !== "string") return invalid("uri must be a string");
  const subscriptions = new Set(record.subscriptions);
  if (request.method === "resources/subscribe") subscriptions.add(params.uri);
  else subscriptions.delete(params.uri);
  record.subscriptions = [...subscriptions];
  return { response: emptyResult(request.id), change: { subscriptions: record.subscriptions } };
}
