import { ErrorCode, McpError } from "../protocol/errors.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { LEGACY_VERSIONS, type LogLevel } from "../protocol/versions.js";
import { McpHttpError } from "./errors.js";
import { type SendOptions, Session } from "./session.js";
import type { Implementation } from "./types.js";

/** Legacy versions the client offers, newest first; 2024-11-05 only survives on stdio and SSE. */
export const CLIENT_LEGACY_VERSIONS: readonly string[] = [...LEGACY_VERSIONS, "2024-11-05"];

/** The handshake era: `initialize`, then a session the wire carries. */
export class LegacySession extends Session {
  readonly era = "legacy";
  /** The version `initialize` settled on; until then the session has none. */
  #negotiated: string | undefined;

  protected get cancelsByNotification(): boolean {
    return true;
  }

  protected override get knownVersion(): string | undefined {
    return this.#negotiated;
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
    this.#negotiated = version;
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
