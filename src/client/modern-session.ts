import { ErrorCode, McpError } from "../protocol/errors.js";
import { MCP_NAME_PARAM } from "../protocol/headers.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { MetaKey, MODERN_VERSION } from "../protocol/versions.js";
import { isHttpRefusal, McpHttpError } from "./errors.js";
import { encodeHeaderValue } from "./header-params.js";
import { type SendOptions, type ServerDescription, Session } from "./session.js";
import type { Implementation } from "./types.js";

/** The stateless era: `_meta` on every request, mirrored into headers on HTTP. */
export class ModernSession extends Session {
  readonly era = "modern";

  protected get cancelsByNotification(): boolean {
    return this.wire.kind !== "http";
  }

  protected prepare(method: string, params: JsonObject, options: SendOptions) {
    const meta: JsonObject = {
      ...(isObject(params._meta) ? params._meta : {}),
      ...options.meta,
      [MetaKey.protocolVersion]: this.protocolVersion,
      [MetaKey.clientCapabilities]: withExtensions(this.config.capabilities, options.extensions),
      [MetaKey.clientInfo]: this.config.clientInfo,
    };
    if (this.config.logLevel) meta[MetaKey.logLevel] = this.config.logLevel;
    const headers: Record<string, string> = {
      "mcp-protocol-version": this.protocolVersion,
      "mcp-method": method,
      ...options.headers,
    };
    const nameField = MCP_NAME_PARAM[method];
    const name = nameField ? params[nameField] : undefined;
    if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name);
    return { params: { ...params, _meta: meta }, headers };
  }

  /**
   * Opens the session with `server/discover`. A -32022 naming another version we speak is
   * retried with it (spec: versioning, negotiation).
   */
  async open(signal?: AbortSignal): Promise<void> {
    try {
      await this.discover({ signal });
    } catch (error) {
      const version = retryVersion(error);
      if (!version) throw error;
      this.protocolVersion = version;
      await this.discover({ signal });
    }
  }

  /** Reads `server/discover` again and keeps what it says. */
  override async discover(options: SendOptions = {}): Promise<ServerDescription> {
    const result = await this.request("server/discover", {}, options);
    const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
    if (!versions.includes(this.protocolVersion)) {
      // Some legacy servers answer any method with an empty result: that is no DiscoverResult.
      throw new McpError(ErrorCode.InvalidRequest, "server/discover gave no DiscoverResult");
    }
    const meta = isObject(result._meta) ? result._meta : {};
    this.server = {
      serverInfo:
        (meta[MetaKey.serverInfo] as Implementation | undefined) ?? this.server.serverInfo,
      capabilities: isObject(result.capabilities) ? result.capabilities : {},
      instructions: typeof result.instructions === "string" ? result.instructions : undefined,
      supportedVersions: versions.filter((v): v is string => typeof v === "string"),
    };
    return this.server;
  }
}

function withExtensions(capabilities: JsonObject, extensions: JsonObject | undefined): JsonObject {
  if (!extensions) return capabilities;
  const declared = isObject(capabilities.extensions) ? capabilities.extensions : {};
  return { ...capabilities, extensions: { ...declared, ...extensions } };
}

function retryVersion(error: unknown): string | undefined {
  if (!(error instanceof McpError) || error.code !== ErrorCode.UnsupportedProtocolVersion) {
    return undefined;
  }
  const supported = isObject(error.data) ? error.data.supported : undefined;
  if (!Array.isArray(supported)) return undefined;
  return supported.includes(MODERN_VERSION) ? MODERN_VERSION : undefined;
}

/** Codes only a modern server answers with: seeing one means "do not fall back". */
const MODERN_ERROR_CODES = new Set<number>([
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion,
]);

/**
 * True when a failed modern probe shows a legacy server: an HTTP 4xx or a JSON-RPC error that
 * is not a recognised modern one (spec: streamable-http, backward compatibility). 401 is not:
 * the caller must authenticate first.
 */
export function isLegacyAnswer(error: unknown): boolean {
  // A rate limit (429, -32005) says "not now", not "not this era": falling back would only be
  // refused again, and hide why.
  if (error instanceof McpHttpError) return isHttpRefusal(error) && error.status !== 429;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RateLimited) return false;
    if (error.code === ErrorCode.UnsupportedProtocolVersion) {
      const supported = isObject(error.data) ? error.data.supported : undefined;
      return Array.isArray(supported) && !supported.includes(MODERN_VERSION);
    }
    return !MODERN_ERROR_CODES.has(error.code);
  }
  return false;
}
