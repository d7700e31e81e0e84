import type { HeaderParam } from "../protocol/header-params.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { toBase64, utf8 } from "../utils/base64.js";

// The rules live in protocol/ (shared with the server); re-exported for this module's callers.
export { findHeaderParams, type HeaderParam } from "../protocol/header-params.js";

const PLAIN = /^[\x20-\x7E]*$/;
const SENTINEL = /^=\?base64\?.*\?=$/s;

/**
 * Encodes a value for `Mcp-Name` or `Mcp-Param-*`: as is when it is plain visible ASCII without
 * surrounding whitespace, else `=?base64?…?=` of its UTF-8 bytes (spec: value encoding).
 */
export function encodeHeaderValue(value: string): string {
  const plain = PLAIN.test(value) && value.trim() === value && !SENTINEL.test(value);
  return plain ? value : `=?base64?${toBase64(utf8(value))}?=`;
}

/** The `Mcp-Param-*` headers for a call's arguments; absent and null values send none. */
export function headerParamValues(
  params: readonly HeaderParam[],
  args: JsonObject,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { header, path } of params) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) ? value[key] : undefined;
    if (typeof value === "string") headers[`mcp-param-${header}`] = encodeHeaderValue(value);
    else if (typeof value === "boolean") headers[`mcp-param-${header}`] = String(value);
    else if (typeof value === "number" && Number.isSafeInteger(value)) {
      headers[`mcp-param-${header}`] = String(value);
    }
  }
  return headers;
}
