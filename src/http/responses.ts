import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import { keptText } from "../utils/json-text.js";
import { hasToJSON, resultFields } from "../utils/result-json.js";
import { type SseStream, sseHeaders } from "./streams/sse.js";
import type { McpHttpResponse } from "./types.js";

const JSON_HEADERS = { "content-type": "application/json" } as const;

/** A JSON response. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): McpHttpResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** The JSON-RPC error message for an error. */
export function errorMessage(error: McpError, id: RequestId | undefined): JsonObject {
  return id === undefined
    ? { jsonrpc: "2.0", error: error.toJSON() }
    : { jsonrpc: "2.0", id, error: error.toJSON() };
}

/**
 * The HTTP status of a JSON-RPC error raised while running a request (in-band): the spec pins
 * 404 for an unknown method and 400 for a missing client capability; a rate limit (`ctx.charge`)
 * is 429 as everywhere; the rest travel as 200.
 */
export function inBandStatus(error: McpError): number {
  if (error.code === ErrorCode.MethodNotFound) return 404;
  if (error.code === ErrorCode.MissingRequiredClientCapability) return 400;
  if (error.code === ErrorCode.RateLimited) return 429;
  return 200;
}

/** A JSON-RPC error in a JSON body, with an explicit HTTP status (the one way to build one). */
export function errorResponse(
  status: number,
  error: McpError,
  options: { id?: RequestId; headers?: Record<string, string> } = {},
): McpHttpResponse {
  return jsonResponse(status, errorMessage(error, options.id), options.headers);
}

/** 405 for an HTTP method the endpoint does not serve here; `allow` lists those it does. */
export function methodNotAllowed(allow = "POST"): McpHttpResponse {
  return errorResponse(405, new McpError(ErrorCode.InvalidRequest, "Method not allowed"), {
    headers: {
      allow,
    },
  });
}

/**
 * A response message and its JSON text. A result that cannot be serialised (a BigInt, a cycle,
 * nesting too deep for JSON.stringify) becomes an internal error for the same request, so the
 * client always gets an answer and the process no unhandled error.
 */
export function serializeResponse(
  body: JsonObject,
  id: RequestId,
  onError: (error: unknown) => void,
): { body: JsonObject; text: string } {
  try {
    return { body, text: JSON.stringify(body) };
  } catch (error) {
    return serializationFailed(error, id, onError);
  }
}

/**
 * {@link serializeResponse} for a result: the envelope is written around the result's own text
 * (written by `resultFields`, the same as JSON.stringify's), and a `_meta` kept as text
 * (`serializedOnce`: the server's, on every modern answer) is written from it, last among the
 * result's keys, instead of serialised again. Where `_meta` was not the last key of the result
 * (a handler's non-object `_meta` replaced), only the order of keys differs from JSON.stringify's.
 */
export function serializeResult(
  result: JsonObject,
  id: RequestId,
  onError: (error: unknown) => void,
): { body: JsonObject; text: string } {
  const body: JsonObject = { jsonrpc: "2.0", id, result };
  // What a handler's hook (toJSON) or a non-object might turn into: the long way.
  if (typeof result !== "object" || result === null || hasToJSON(result))
    return serializeResponse(body, id, onError);
  // An integer id (most are) is its own text: no call into the serialiser for it.
  const idText = typeof id === "number" && Number.isSafeInteger(id) ? `${id}` : JSON.stringify(id);
  let text: string;
  try {
    const meta = result._meta;
    const kept = keptText(meta);
    const fields = resultFields(result, kept === undefined ? undefined : "_meta");
    // Written in as few pieces as can be: the answer is flattened, piece by piece, to be sent.
    if (fields === undefined)
      text = `{"jsonrpc":"2.0","id":${idText},"result":${stringified(result, meta, kept)}}`;
    else if (kept === undefined) text = `{"jsonrpc":"2.0","id":${idText},"result":{${fields}}}`;
    else if (fields === "") text = `{"jsonrpc":"2.0","id":${idText},"result":{"_meta":${kept}}}`;
    else text = `{"jsonrpc":"2.0","id":${idText},"result":{${fields}${metaTail(kept)}`;
  } catch (error) {
    return serializationFailed(error, id, onError);
  }
  return { body, text };
}

/** `,"_meta":…}}` closing a result and its message, for the last kept `_meta` (the server's). */
let lastKept = "";
let lastTail = "";
function metaTail(kept: string): string {
  if (kept !== lastKept) {
    lastKept = kept;
    lastTail = `,"_meta":${kept}}}`;
  }
  return lastTail;
}

/** A result's text by JSON.stringify, a kept `_meta` written from its text, last. */
function stringified(result: JsonObject, meta: unknown, kept: string | undefined): string {
  if (kept === undefined) return JSON.stringify(result);
  // Left out as JSON.stringify leaves out undefined, with the result's shape unchanged.
  result._meta = undefined;
  let text: string;
  try {
    text = JSON.stringify(result);
  } finally {
    result._meta = meta;
  }
  return `${text.length === 2 ? "{" : `${text.slice(0, -1)},`}"_meta":${kept}}`;
}

function serializationFailed(
  error: unknown,
  id: RequestId,
  onError: (error: unknown) => void,
): { body: JsonObject; text: string } {
  onError(error);
  const fallback = errorMessage(
    new McpError(ErrorCode.InternalError, "Internal error: the result could not be serialised"),
    id,
  );
  return { body: fallback, text: JSON.stringify(fallback) };
}

/**
 * A 200 answer streaming `stream`: its body (the readable) is made only if a host asks for it,
 * and `sse` lets a host that can write to its connection directly attach instead.
 */
export function sseResponse(stream: SseStream): McpHttpResponse {
  let body: McpHttpResponse["body"] | undefined;
  const response: McpHttpResponse = {
    status: 200,
    headers: sseHeaders(),
    get body() {
      body ??= stream.readable;
      return body;
    },
    set body(value) {
      body = value;
      delete response.sse;
    },
    sse: stream,
  };
  return response;
}
