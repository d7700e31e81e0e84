/** A JSON-RPC request id: the spec forbids `null`. */
export type RequestId = string | number;

/** Any JSON object. */
export type JsonObject = { [key: string]: unknown };

/** A JSON-RPC request. */
export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: JsonObject;
}

/** A JSON-RPC notification. */
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: JsonObject;
}

/** A JSON-RPC success response. */
export interface JsonRpcResult {
  jsonrpc: "2.0";
  id: RequestId;
  result: JsonObject;
}

/** A JSON-RPC error response; `id` is absent when the request's id could not be read. */
export interface JsonRpcErrorResponse {
  jsonrpc: "2.0";
  id?: RequestId;
  error: { code: number; message: string; data?: unknown };
}

/** Any JSON-RPC message. */
export type JsonRpcMessage =
  | JsonRpcRequest
  | JsonRpcNotification
  | JsonRpcResult
  | JsonRpcErrorResponse;

/** True for a plain (non-array, non-null) object. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a valid request id: a string or an integer. */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}

/** True when `message` is a well-formed JSON-RPC request. */
export function isRequest(message: JsonObject): message is JsonObject & JsonRpcRequest {
  return (
    message.jsonrpc === "2.0" &&
    typeof message.method === "string" &&
    isRequestId(message.id) &&
    (message.params === undefined || isObject(message.params))
  );
}

/** True when `message` is a well-formed JSON-RPC notification. */
export function isNotification(message: JsonObject): message is JsonObject & JsonRpcNotification {
  return (
    message.jsonrpc === "2.0" &&
    typeof message.method === "string" &&
    !("id" in message) &&
    (message.params === undefined || isObject(message.params))
  );
}

/** True when `message` is a JSON-RPC response (result or error). */
export function isResponse(
  message: JsonObject,
): message is JsonObject & (JsonRpcResult | JsonRpcErrorResponse) {
  return (
    message.jsonrpc === "2.0" &&
    !("method" in message) &&
    ("result" in message || "error" in message)
  );
}
