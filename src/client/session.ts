import type { Context } from "@opentelemetry/api";
import { McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import { OwnAttributes } from "../telemetry/attributes.js";
import { ClientOperation } from "../telemetry/client-operation.js";
import { otel } from "../telemetry/otel.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { destinationOf } from "./destination.js";
import type { InputRouter } from "./input-router.js";
import type { Era, Implementation, InputHandlers, Notification } from "./types.js";
import type { Wire } from "./wire.js";

/** What a session needs from the client that owns it. */
export interface SessionConfig {
  clientInfo: Implementation;
  capabilities: JsonObject;
  logLevel?: LogLevel;
  /** Where the CLIENT span of each message goes; undefined when telemetry is off. */
  telemetry?: Telemetry | undefined;
  /** Who answers the server's input requests: the request's own callbacks, else the client's. */
  input: InputRouter;
}

/** Where a request's CLIENT span belongs: under its logical call, as one of its rounds. */
export interface RequestTrace {
  /** The span's parent, captured when the caller asked (async context is not always kept). */
  parent: Context;
  /** The round of a multi round-trip request (1 for the first). */
  round?: number | undefined;
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
  /** The request's own input callbacks, for the server requests that come with it (legacy). */
  onInput?: InputHandlers | undefined;
  /** The parent and round of the request's CLIENT span. @default the active context */
  trace?: RequestTrace;
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

  /** The protocol version, once the era knows it (a legacy session after `initialize`). */
  protected get knownVersion(): string | undefined {
    return this.protocolVersion;
  }

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
    const operation = this.#startOperation(message, options.trace);
    if (operation) message.params = operation.inject(message.params);
    let response: Awaited<ReturnType<Wire["request"]>>;
    try {
      const send = () =>
        this.wire.request(message, {
          signal: options.signal,
          headers: prepared.headers,
          onNotification: options.onNotification,
          onInput: options.onInput,
        });
      // The transport's own spans (an instrumented fetch) go under the request's.
      response = await (operation ? otel()!.context.with(operation.context, send) : send());
    } catch (error) {
      operation?.endWithError(error);
      if (options.signal?.aborted && this.cancelsByNotification) {
        const reason = String((options.signal.reason as Error)?.message ?? "aborted");
        const cancelled = { requestId: message.id, reason };
        // Under the request it cancels (in its trace even when the request's span is a root).
        const under = operation?.context;
        void this.notify("notifications/cancelled", cancelled, under).catch(() => {});
      }
      throw error;
    }
    operation?.end("error" in response ? { error: response.error } : { result: response.result });
    if ("error" in response) {
      throw new McpError(response.error.code, response.error.message, response.error.data);
    }
    return response.result;
  }

  /** Sends a notification, under a CLIENT span of its own that ends once it is sent. */
  async notify(method: string, params?: JsonObject, parent?: Context): Promise<void> {
    const headers = this.prepare(method, params ?? {}, {}).headers;
    const message: JsonRpcNotification = params
      ? { jsonrpc: "2.0", method, params }
      : { jsonrpc: "2.0", method };
    const operation = this.#startOperation(message, parent && { parent });
    if (operation) {
      const injected = operation.inject(params);
      if (params || Object.keys(injected).length > 0) message.params = injected;
    }
    try {
      await this.wire.notify(message, headers);
      operation?.end();
    } catch (error) {
      operation?.endWithError(error);
      throw error;
    }
  }

  /** The CLIENT span of a message we send, when telemetry is on. */
  #startOperation(
    message: JsonRpcRequest | JsonRpcNotification,
    trace: RequestTrace | undefined,
  ): ClientOperation | undefined {
    const { telemetry } = this.config;
    if (!telemetry?.live) return undefined;
    const operation = new ClientOperation(
      telemetry,
      message,
      destinationOf(this.wire, this.knownVersion),
      trace?.parent,
    );
    if (trace?.round !== undefined) operation.set(OwnAttributes.round, trace.round);
    return operation;
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
