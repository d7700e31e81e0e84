import { ErrorCode, McpError } from "../../protocol/errors.js";
import { MCP_NAME_PARAM } from "../../protocol/headers.js";
import type { JsonObject } from "../../protocol/messages.js";
import type { RegisteredTool } from "../../server/mcp-server.js";
import { fromBase64, fromUtf8 } from "../../utils/base64.js";
import type { McpHttpRequest } from "../types.js";

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Longest mirrored header value we read. */
const MAX_HEADER_VALUE = 8 * 1024;

function mismatch(message: string): McpError {
  return new McpError(ErrorCode.HeaderMismatch, `Header mismatch: ${message}`);
}

/**
 * Whether every character is visible ASCII, a space or a tab (RFC 9110 field values). A loop:
 * for the short values mirrored on every request, cheaper than entering the regexp engine.
 */
function isFieldValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code > 0x7e) return false;
  }
  return true;
}

/** Decodes a mirrored header value, undoing the `=?base64?…?=` sentinel. */
export function decodeHeaderValue(name: string, value: string): string {
  if (value.length > MAX_HEADER_VALUE) throw mismatch(`${name} header is too long`);
  if (!isFieldValue(value)) throw mismatch(`${name} header has invalid characters`);
  const wrapped =
    value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length &&
    value.startsWith(SENTINEL_PREFIX) &&
    value.endsWith(SENTINEL_SUFFIX);
  if (!wrapped) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, -SENTINEL_SUFFIX.length);
  try {
    if (!BASE64.test(encoded)) throw new Error("not base64");
    return fromUtf8(fromBase64(encoded));
  } catch {
    throw mismatch(`${name} header has an invalid base64 value`);
  }
}

function valueAt(args: JsonObject, path: string[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = (node as JsonObject)[key];
  }
  return node;
}

/**
 * An integer as clients write it (spec: value encoding, "decimal string representation"): an
 * optional `-` and digits without leading zeros, or ".0"s after them, which the spec's
 * server-validation note compares equal ("42.0" is 42). Anything else `Number()` would read
 * (`0x2A`, `1e1`, `+42`, ` 42`, `042`) is a value an intermediary could read otherwise.
 */
const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]*)(\.0+)?$/;

function sameValue(header: string, body: unknown): boolean {
  if (typeof body === "string") return header === body;
  if (typeof body === "boolean") return header === String(body);
  if (typeof body === "number") {
    if (!DECIMAL_INTEGER.test(header)) return false;
    const value = Number(header);
    // Beyond 2^53 distinct decimals round to one number (the spec bounds these integers).
    return Number.isSafeInteger(value) && value === body;
  }
  return false;
}

/**
 * Checks that `MCP-Protocol-Version` mirrors the body's version (spec: transports, request
 * metadata). A mismatch is a HeaderMismatch even when the body names an unknown version.
 */
export function validateVersionHeader(req: McpHttpRequest, version: string): void {
  const versionHeader = req.header("mcp-protocol-version");
  if (versionHeader === null) throw mismatch("MCP-Protocol-Version header is required");
  if (versionHeader !== version) {
    throw mismatch(
      `MCP-Protocol-Version header '${versionHeader}' does not match body value '${version}'`,
    );
  }
}

/**
 * Checks the other headers that mirror the body: `Mcp-Method`, `Mcp-Name` and the tool's
 * `Mcp-Param-*`. Runs after {@link validateVersionHeader} and the version check.
 */
export function validateMirroredHeaders(
  req: McpHttpRequest,
  method: string,
  params: JsonObject,
  tool: RegisteredTool | undefined,
): void {
  const methodHeader = req.header("mcp-method");
  if (methodHeader === null) throw mismatch("Mcp-Method header is required");
  if (methodHeader !== method) {
    throw mismatch(`Mcp-Method header '${methodHeader}' does not match body value '${method}'`);
  }
  const nameField = MCP_NAME_PARAM[method];
  if (nameField) {
    const raw = req.header("mcp-name");
    if (raw === null) throw mismatch("Mcp-Name header is required");
    const name = decodeHeaderValue("Mcp-Name", raw);
    if (name !== params[nameField]) {
      throw mismatch(
        `Mcp-Name header '${name}' does not match body value '${String(params[nameField])}'`,
      );
    }
  }
  if (!tool || tool.headerParams.length === 0) return;
  const args =
    typeof params.arguments === "object" && params.arguments !== null
      ? (params.arguments as JsonObject)
      : {};
  for (const { header, path } of tool.headerParams) {
    const headerName = `Mcp-Param-${header}`;
    const raw = req.header(headerName.toLowerCase());
    const body = valueAt(args, path);
    if (body === undefined || body === null) {
      if (raw !== null) throw mismatch(`${headerName} header is present but the argument is not`);
      continue;
    }
    if (raw === null) throw mismatch(`${headerName} header is required`);
    const value = decodeHeaderValue(headerName, raw);
    if (!sameValue(value, body)) {
      throw mismatch(`${headerName} header '${value}' does not match body value '${String(body)}'`);
    }
  }
}
