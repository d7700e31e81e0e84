import { ErrorCode, McpError } from "../protocol/errors.js";
import { MCP_NAME_PARAM } from "../protocol/headers.js";
import { isObject, type JsonObject, type JsonRpcRequest } from "../protocol/messages.js";
import { LEGACY_VERSIONS, type LogLevel, MetaKey, MODERN_VERSION } from "../protocol/versions.js";
import { McpHttpError } from "./errors.js";
import { encodeHeaderValue } from "./header-params.js";
import type { Era, Implementation, Notification } from "./types.js";
import type { Wire } from "./wire.js";

/** Legacy versions the client offers, newest first; 2024-11-05 only survives on stdio and SSE. */
export const CLIENT_LEGACY_VERSIONS: readonly string[] = [...LEGACY_VERSIONS, "2024-11-05"];

/** What a session needs from the client that owns it. */
export interface SessionConfig {
  clientInfo: Implementation;
  capabilities: JsonObject;
  logLevel?: LogLevel;
}

/** Options of one request on a session. */
export interface SendOptions {
  signal?: AbortSignal;
  /** Extra HTTP headers, such as a tool's `Mcp-Param-*`. */
  headers?: Record<string, string>;
  /** Extra `_meta` (a progress token, a trace context). */
  meta?: JsonObject;
  /** Extensions declared on this request only (modern era), beside the client's capabilities. */
  extensions?: JsonObject;
  onNotification?: (notification: Notification) => void;
}

/** What the server said about itself when the session opened. */
export interface ServerDescription {
  serverInfo: Implementation | undefined;
  capabilities: JsonObject;
  instructions: string | undefined;
  /** Versions the server named (`server/discover`), or the one negotiated (legacy). */
  supportedVersions: string[];
}

/** One era's way of talking to a server over a wire. */
export abstract class Session {
  abstract readonly era: Era;
  readonly wire: Wire;
  readonly config: SessionConfig;
  protocolVersion: string;
  server: ServerDescription = {
    serverInfo: undefined,
    capabilities: {},
    instructions: undefined,
    supportedVersions: [],
  };
  private nextId = 1;

  constructor(wire: Wire, config: SessionConfig, protocolVersion: string) {
    this.wire = wire;
    this.config = config;
    this.protocolVersion = protocolVersion;
  }

  protected abstract prepare(
    method: string,
    params: JsonObject,
    options: SendOptions,
  ): { params: JsonObject; headers: Record<string, string> };

  /** Whether aborting a request must be told with `notifications/cancelled`. */
  protected abstract get cancelsByNotification(): boolean;

  /** Sends one request and resolves with its result; a JSON-RPC error rejects as McpError. */
  async request(
    method: string,
    params: JsonObject,
    options: SendOptions = {},
  ): Promise<JsonObject> {
    const prepared = this.prepare(method, params, options);
    const message: JsonRpcRequest = {
      jsonrpc: "2.0",
      id: this.nextId++,
      method,
      params: prepared.params,
    };
    let response: Awaited<ReturnType<Wire["request"]>>;
    try {
      response = await this.wire.request(message, {
        signal: options.signal,
        headers: prepared.headers,
        onNotification: options.onNotification,
      });
    } catch (error) {
      if (options.signal?.aborted && this.cancelsByNotification) {
        const reason = String((options.signal.reason as Error)?.message ?? "aborted");
        void this.notify("notifications/cancelled", { requestId: message.id, reason }).catch(
          () => {},
        );
      }
      throw error;
    }
    if ("error" in response) {
      throw new McpError(response.error.code, response.error.message, response.error.data);
    }
    return response.result;
  }

  /** Sends a notification. */
  notify(method: string, params?: JsonObject): Promise<void> {
    const message = params
      ? { jsonrpc: "2.0" as const, method, params }
      : { jsonrpc: "2.0" as const, method };
    return this.wire.notify(message, this.prepare(method, params ?? {}, {}).headers);
  }

  /** What the server says about itself now; a legacy session keeps what `initialize` said. */
  async discover(_options: SendOptions = {}): Promise<ServerDescription> {
    return this.server;
  }

  /** Asks for log messages at `level` and above from now on; undefined for none. */
  async setLogLevel(level: LogLevel | undefined): Promise<void> {
    this.config.logLevel = level;
  }

  /** Tells the server the client's roots changed (legacy only: modern servers ask each time). */
  async rootsChanged(): Promise<void> {}

  /** Ends the session and the wire. */
  close(): Promise<void> {
    return this.wire.close();
  }
}

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
  if (error instanceof McpHttpError)
    return error.status >= 400 && error.status < 500 && error.status !== 401;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.UnsupportedProtocolVersion) {
      const supported = isObject(error.data) ? error.data.supported : undefined;
      return Array.isArray(supported) && !supported.includes(MODERN_VERSION);
    }
    return !MODERN_ERROR_CODES.has(error.code);
  }
  return false;
}

/** The handshake era: `initialize`, then a session the wire carries. */
export class LegacySession extends Session {
  readonly era = "legacy";

  protected get cancelsByNotification(): boolean {
    return true;
  }

  protected prepare(_method: string, params: JsonObject, options: SendOptions) {
    const meta = { ...(isObject(params._meta) ? params._meta : {}), ...options.meta };
    const out = Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params;
    return { params: out, headers: options.headers ?? {} };
  }

  /** `initialize` and `notifications/initialized`; the wire then carries the session. */
  async open(signal?: AbortSignal): Promise<void> {
    const { capabilities } = this.config;
    const result = await super.request(
      "initialize",
      {
        protocolVersion: CLIENT_LEGACY_VERSIONS[0]!,
        capabilities: legacyCapabilities(capabilities),
        clientInfo: this.config.clientInfo,
      },
      { signal },
    );
    const version = String(result.protocolVersion);
    if (!CLIENT_LEGACY_VERSIONS.includes(version)) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Server answered unsupported version ${version}`,
      );
    }
    this.protocolVersion = version;
    this.wire.legacyVersion = version;
    this.server = {
      serverInfo: result.serverInfo as Implementation | undefined,
      capabilities: isObject(result.capabilities) ? result.capabilities : {},
      instructions: typeof result.instructions === "string" ? result.instructions : undefined,
      supportedVersions: [version],
    };
    await this.notify("notifications/initialized");
    const logging = this.server.capabilities.logging !== undefined;
    if (this.config.logLevel && logging) {
      await super.request("logging/setLevel", { level: this.config.logLevel }, { signal });
    }
    this.wire.openStream?.();
  }

  /** The session's level is set with `logging/setLevel` (when the server logs). */
  override async setLogLevel(level: LogLevel | undefined): Promise<void> {
    this.config.logLevel = level;
    if (level && this.server.capabilities.logging !== undefined) {
      await this.request("logging/setLevel", { level });
    }
  }

  /** `notifications/roots/list_changed`, when the client declared roots. */
  override async rootsChanged(): Promise<void> {
    if (this.config.capabilities.roots) await this.notify("notifications/roots/list_changed");
  }

  /** A request; an expired session (404) is opened again once and the request retried. */
  override async request(
    method: string,
    params: JsonObject,
    options: SendOptions = {},
  ): Promise<JsonObject> {
    try {
      return await super.request(method, params, options);
    } catch (error) {
      if (!(error instanceof McpHttpError && error.status === 404)) throw error;
      this.wire.sessionId = undefined;
      await this.open(options.signal);
      return super.request(method, params, options);
    }
  }
}

/** Legacy capabilities: roots gain `listChanged` (see `rootsChanged`), the rest carry over. */
function legacyCapabilities(capabilities: JsonObject): JsonObject {
  return capabilities.roots ? { ...capabilities, roots: { listChanged: true } } : capabilities;
}
