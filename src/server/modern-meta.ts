import { ErrorCode, invalidParams, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { isLogLevel, type LogLevel, MetaKey, MODERN_VERSIONS } from "../protocol/versions.js";
import type { Implementation } from "./types.js";

/** What every modern request carries in `_meta` (spec: basic/index, per-request fields). */
export interface ModernMeta {
  version: string;
  capabilities: JsonObject;
  clientInfo: Implementation | undefined;
  logLevel: LogLevel | undefined;
}

/** Reads the per-request `_meta`; a missing required field is InvalidParams. */
export function readModernMeta(params: JsonObject): ModernMeta {
  const meta = isObject(params._meta) ? params._meta : {};
  const version = meta[MetaKey.protocolVersion];
  const capabilities = meta[MetaKey.clientCapabilities];
  if (typeof version !== "string") {
    throw invalidParams(`_meta["${MetaKey.protocolVersion}"] is required`);
  }
  if (!isObject(capabilities)) {
    throw invalidParams(`_meta["${MetaKey.clientCapabilities}"] is required`);
  }
  const logLevel = meta[MetaKey.logLevel];
  if (logLevel !== undefined && !isLogLevel(logLevel)) {
    throw invalidParams(`Unknown log level: ${String(logLevel)}`);
  }
  const clientInfo = meta[MetaKey.clientInfo];
  return {
    version,
    capabilities,
    clientInfo: isObject(clientInfo) ? (clientInfo as unknown as Implementation) : undefined,
    logLevel,
  };
}

/** The UnsupportedProtocolVersion error for a version we do not serve statelessly, if so. */
export function unsupportedVersion(version: string): McpError | undefined {
  if (MODERN_VERSIONS.includes(version)) return undefined;
  return new McpError(
    ErrorCode.UnsupportedProtocolVersion,
    `Unsupported protocol version: ${version}`,
    {
      supported: [...MODERN_VERSIONS],
      requested: version,
    },
  );
}

/** True when a request carries the modern era's `_meta` (PROTOCOL §1). */
export function isModernRequest(method: string, params: JsonObject | undefined): boolean {
  const modern =
    isObject(params) &&
    isObject(params._meta) &&
    params._meta[MetaKey.protocolVersion] !== undefined;
  // initialize with its own protocolVersion is legacy even when it also carries modern _meta.
  return modern && !(method === "initialize" && typeof params?.protocolVersion === "string");
}
