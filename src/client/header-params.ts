import { isObject, type JsonObject } from "../protocol/messages.js";
import { toBase64, utf8 } from "../utils/base64.js";

/** A tool parameter mirrored into an `Mcp-Param-*` header. */
export interface HeaderParam {
  header: string;
  path: string[];
}

/** RFC 9110 `token` (field-name syntax). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PLAIN = /^[\x20-\x7E]*$/;
const SENTINEL = /^=\?base64\?.*\?=$/s;
/** Keywords whose values are data, not subschemas: an `x-mcp-header` key there is no annotation. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

/**
 * Finds a tool's `x-mcp-header` annotations and checks them against the spec's rules
 * (transports/streamable-http, custom headers): a token, unique ignoring case, on a string,
 * integer or boolean property reachable from the root through `properties` alone.
 * Throws a TypeError naming the first rule broken: the tool must then be excluded.
 */
export function findHeaderParams(inputSchema: JsonObject): HeaderParam[] {
  const found: HeaderParam[] = [];
  const walk = (node: unknown, path: string[] | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, undefined);
      return;
    }
    if (!isObject(node)) return;
    if ("x-mcp-header" in node) {
      const header = node["x-mcp-header"];
      if (!path) throw new TypeError("x-mcp-header is not reachable through properties alone");
      if (typeof header !== "string" || !TOKEN.test(header)) {
        throw new TypeError(`x-mcp-header ${JSON.stringify(header)} is not a header token`);
      }
      if (!["string", "integer", "boolean"].includes(node.type as string)) {
        throw new TypeError(`x-mcp-header ${header} is not on a string, integer or boolean`);
      }
      if (found.some((entry) => entry.header.toLowerCase() === header.toLowerCase())) {
        throw new TypeError(`x-mcp-header ${header} is declared twice`);
      }
      found.push({ header, path });
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (key === "properties" && isObject(value) && path) {
        for (const [name, child] of Object.entries(value)) walk(child, [...path, name]);
      } else {
        walk(value, undefined);
      }
    }
  };
  walk(inputSchema, []);
  return found;
}

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
