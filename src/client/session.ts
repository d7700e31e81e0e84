import { McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcRequest } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import type { Era, Implementation, Notification } from "./types.js";
import type { Wire } from "./wire.js";

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
