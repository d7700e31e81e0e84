import type { JsonRpcRequest } from "../../protocol/messages.js";
import {
  answerSessionMethod,
  type SessionChange,
  type SessionMethod,
  type SessionMethodState,
} from "../../server/session-methods.js";
import { errorResponse, jsonResponse } from "../responses.js";
import type { McpHttpResponse } from "../types.js";

/** A session method's HTTP answer, and the change to the session's record it makes. */
export interface SessionMethodAnswer {
  response: McpHttpResponse;
  change?: SessionChange;
}

/** Answers a session method over HTTP (errors in-band, as 200: PROTOCOL §3). */
export function answerOverHttp(
  method: SessionMethod,
  request: JsonRpcRequest,
  state: SessionMethodState,
): SessionMethodAnswer {
  const outcome = answerSessionMethod(method, request.params ?? {}, state);
  if ("error" in outcome)
    return { response: errorResponse(200, outcome.error, { id: request.id }) };
  const response = jsonResponse(200, { jsonrpc: "2.0", id: request.id, result: outcome.result });
  return outcome.change ? { response, change: outcome.change } : { response };
}
