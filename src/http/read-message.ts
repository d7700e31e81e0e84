import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { errorResponse } from "./responses.js";
import type { BodyResult, McpHttpResponse } from "./types.js";

/** A POST body read as one JSON-RPC message object, or the response that refuses it. */
export type ReadMessage = { message: JsonObject } | { response: McpHttpResponse };

function badRequest(code: number, message: string): { response: McpHttpResponse } {
  return { response: errorResponse(400, new McpError(code, message)) };
}

/**
 * Reads a POST body (read with a limit of `maxBytes`) as one JSON object: 413 beyond the limit,
 * 400 for a body that cannot be read or parsed, for a batch (not supported) and for anything not
 * an object. Synchronous: the caller awaits the body itself, one await less on every request.
 */
export function readMessage(body: BodyResult, maxBytes: number): ReadMessage {
  let message: unknown;
  if (body.kind === "too-large")
    return {
      response: errorResponse(
        413,
        new McpError(ErrorCode.InvalidRequest, `Request body exceeds ${maxBytes} bytes`),
      ),
    };
  if (body.kind === "unreadable")
    return badRequest(ErrorCode.ParseError, "Parse error: body could not be read");
  if (body.kind === "parsed") message = body.value;
  else {
    try {
      message = JSON.parse(body.text);
    } catch {
      return badRequest(ErrorCode.ParseError, "Parse error: body is not valid JSON");
    }
  }
  if (Array.isArray(message))
    return badRequest(ErrorCode.InvalidRequest, "Batch requests are not supported");
  if (!isObject(message)) return badRequest(ErrorCode.InvalidRequest, "Invalid JSON-RPC message");
  return { message };
}
