import { ErrorCode, isMcpError } from "../protocol/errors.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import { ResultCache } from "./cache.js";
import { type EraOptions, openSession, rememberedEras } from "./connect.js";
import { findHeaderParams, type HeaderParam, headerParamValues } from "./header-params.js";
import { type HttpOptions, HttpWire } from "./http-wire.js";
import { answerInput, capabilitiesFor, withInput } from "./input.js";
import { listenLegacy, listenModern, type Subscription } from "./listen.js";
import { listAll } from "./pages.js";
import type { ServerDescription, Session } from "./session.js";
import { Tool, type ToolPolicy } from "./tool.js";
import type {
  CallToolResult,
  Era,
  Implementation,
  InputHandlers,
  ListenFilter,
  LogMessage,
  Notification,
  RequestOptions,
  ToolDefinition,
} from "./types.js";
import type { Wire } from "./wire.js";

/** Options of {@link McpClient.connect}. */
export interface McpClientOptions extends HttpOptions, ToolPolicy {
  /** Who the client is. @default { name: "mcp-mount-client", version: "0.1.0" } */
  clientInfo?: Implementation;
  /** Callbacks answering servers' input requests; capabilities are declared for these only. */
  onInput?: InputHandlers;
  /** Capabilities declared beyond those the callbacks imply (merged over them). */
  capabilities?: JsonObject;
  /** `input_required` retries allowed per request. @default 8 */
  maxInputRounds?: number;
  /** Milliseconds for each round trip; 0 for none. @default 60000 */
  timeoutMs?: number;
  /** Ask servers for log messages at this level and above (see `onLog`). */
  logLevel?: LogLevel;
  /** Receives the servers' log messages. */
  onLog?: (message: LogMessage) => void;
  /** Receives every notification that reaches the client outside a request's own stream. */
  onNotification?: (notification: Notification) => void;
  /** Speak one era, or detect it. @default "auto" */
  era?: Era | "auto";
  /** Remember detected eras per HTTP endpoint: in this process by default, or in your map. */
  eraCache?: Map<string, Era> | false;
  /** Keep list and read results for their `ttlMs`, until a change notification. @default true */
  cache?: boolean;
  /** How long a stdio probe waits for `server/discover`. @default 3000 */
  probeTimeoutMs?: number;
  /** Receives warnings, such as tools excluded for invalid `x-mcp-header`. @default console.warn */
  onWarning?: (message: string) => void;
  /** Aborts connecting. */
  signal?: AbortSignal;
}

/** A prompt, resource or resource template as listed. */
export type Listed = JsonObject & { name: string };

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A dual-era MCP client: modern (2026-07-28, stateless, multi round-trip input) or legacy
 * (`initialize` and a session), over Streamable HTTP or any other {@link Wire} such as stdio.
 */
export class McpClient {
  private readonly session: Session;
  private readonly options: McpClientOptions;
  private readonly cache = new ResultCache();
  private readonly listeners = new Set<(notification: Notification) => void>();
  /** The `x-mcp-header` parameters of each tool last listed, by server name. */
  private readonly headerParams = new Map<string, HeaderParam[]>();
  private nextToken = 1;

  private constructor(session: Session, options: McpClientOptions) {
    this.session = session;
    this.options = options;
  }

  /**
   * Connects to a server: a Streamable HTTP URL, or a wire such as `stdio(...)` from
   * `mcp-mount/client/stdio`. Detects the era (modern first, then `initialize`).
   */
  static async connect(
    target: string | URL | Wire,
    options: McpClientOptions = {},
  ): Promise<McpClient> {
    const wire =
      typeof target === "string" || target instanceof URL ? new HttpWire(target, options) : target;
    const handlers = options.onInput ?? {};
    const capabilities = { ...capabilitiesFor(handlers), ...options.capabilities };
    const config = {
      clientInfo: options.clientInfo ?? { name: "mcp-mount-client", version: "0.1.0" },
      capabilities,
      ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    };
    let client: McpClient | undefined;
    wire.handlers = {
      notification: (notification) => client?.deliver(notification),
      request: (method, params) =>
        answerInput(handlers, method, params, { signal: new AbortController().signal }),
    };
    const era: EraOptions = {
      era: options.era ?? "auto",
      eraCache: options.eraCache === false ? undefined : (options.eraCache ?? rememberedEras),
      probeTimeoutMs: options.probeTimeoutMs ?? 3_000,
    };
    if (options.signal) era.signal = options.signal;
    try {
      client = new McpClient(await openSession(wire, config, era), options);
    } catch (error) {
      await wire.close().catch(() => {});
      throw error;
    }
    return client;
  }

  /** The era this client speaks with the server. */
  get era(): Era {
    return this.session.era;
  }

  /** The protocol version in use. */
  get protocolVersion(): string {
    return this.session.protocolVersion;
  }

  /** What the server said about itself: info, capabilities, instructions, versions. */
  get server(): ServerDescription {
    return this.session.server;
  }

  /** Re-reads `server/discover` (modern); a legacy session answers from `initialize`. */
  async discover(options: RequestOptions = {}): Promise<ServerDescription> {
    if (this.era === "modern") {
      const result = await this.send("server/discover", {}, options);
      const meta = isObject(result._meta) ? result._meta : {};
      this.session.server = {
        serverInfo:
          (meta["io.modelcontextprotocol/serverInfo"] as Implementation) ?? this.server.serverInfo,
        capabilities: isObject(result.capabilities) ? result.capabilities : {},
        instructions: typeof result.instructions === "string" ? result.instructions : undefined,
        supportedVersions: Array.isArray(result.supportedVersions)
          ? (result.supportedVersions as string[])
          : [],
      };
    }
    return this.server;
  }

  /**
   * The server's tools as {@link Tool} objects, every page. On HTTP a tool whose
   * `x-mcp-header` annotations break the spec's rules is left out, with a warning.
   */
  async tools(options: RequestOptions = {}): Promise<Tool[]> {
    const definitions = (await this.list("tools/list", "tools", options)) as ToolDefinition[];
    const tools: Tool[] = [];
    for (const definition of definitions) {
      if (this.session.wire.kind === "http" && this.era === "modern") {
        try {
          this.headerParams.set(definition.name, findHeaderParams(definition.inputSchema ?? {}));
        } catch (error) {
          this.warn(`Tool ${definition.name} excluded: ${(error as Error).message}`);
          continue;
        }
      }
      tools.push(
        new Tool(
          definition,
          this.options,
          (tool, args, callOptions) => this.callTool(tool.serverName, args, callOptions),
          (message) => this.warn(message),
        ),
      );
    }
    return tools;
  }

  /** One tool by the name a model calls (with prefix) or its server name. */
  async tool(name: string, options: RequestOptions = {}): Promise<Tool | undefined> {
    const tools = await this.tools(options);
    return (
      tools.find((tool) => tool.name === name) ?? tools.find((tool) => tool.serverName === name)
    );
  }

  /**
   * Calls a tool by its server name and returns the whole result, answering input rounds.
   * Its `x-mcp-header` parameters are mirrored when `tools()` listed it.
   */
  async callTool(
    name: string,
    args: JsonObject = {},
    options: RequestOptions & { headers?: Record<string, string> } = {},
  ): Promise<CallToolResult> {
    const mirrored = () => {
      const headerParams = this.headerParams.get(name);
      return options.headers || !headerParams
        ? options
        : { ...options, headers: headerParamValues(headerParams, args) };
    };
    let result: JsonObject;
    try {
      result = await this.send("tools/call", { name, arguments: args }, mirrored());
    } catch (error) {
      // The tool's schema changed since it was listed: list again and retry once
      // (spec: streamable-http, custom headers, client behavior).
      if (!(isMcpError(error) && error.code === ErrorCode.HeaderMismatch)) throw error;
      if (options.headers || !this.headerParams.has(name)) throw error;
      await this.tools({ ...options, fresh: true });
      result = await this.send("tools/call", { name, arguments: args }, mirrored());
    }
    return {
      ...result,
      content: Array.isArray(result.content) ? result.content : [],
    } as CallToolResult;
  }

  /** Every prompt the server lists. */
  prompts(options: RequestOptions = {}): Promise<Listed[]> {
    return this.list("prompts/list", "prompts", options) as Promise<Listed[]>;
  }

  /** Gets a prompt with its arguments, answering input rounds. */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: RequestOptions = {},
  ): Promise<JsonObject> {
    return this.send("prompts/get", { name, arguments: args }, options);
  }

  /** Every resource the server lists. */
  resources(options: RequestOptions = {}): Promise<Listed[]> {
    return this.list("resources/list", "resources", options) as Promise<Listed[]>;
  }

  /** Every resource template the server lists. */
  resourceTemplates(options: RequestOptions = {}): Promise<Listed[]> {
    return this.list("resources/templates/list", "resourceTemplates", options) as Promise<Listed[]>;
  }

  /** Reads a resource, answering input rounds; kept for its `ttlMs`. */
  async readResource(uri: string, options: RequestOptions = {}): Promise<JsonObject> {
    const key = `resources/read ${uri}`;
    const cached = this.cached(key, options);
    if (cached) return cached as JsonObject;
    const result = await this.send("resources/read", { uri }, options);
    this.keep(key, result, result.ttlMs);
    return result;
  }

  /** Completion values for a prompt or resource-template argument. */
  async complete(
    ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string },
    argument: { name: string; value: string },
    context?: { arguments: Record<string, string> },
    options: RequestOptions = {},
  ): Promise<{ values: string[]; total?: number; hasMore?: boolean }> {
    const params: JsonObject = { ref, argument };
    if (context) params.context = context;
    const result = await this.send("completion/complete", params, options);
    return (isObject(result.completion) ? result.completion : { values: [] }) as {
      values: string[];
    };
  }

  /**
   * Change notifications as an async iterator: a `subscriptions/listen` stream (modern), or
   * the session's GET stream and resource subscriptions (legacy). `break` or `close()` ends it.
   */
  listen(filter: ListenFilter, options: { signal?: AbortSignal } = {}): Subscription {
    const deliver = (notification: Notification) => this.deliver(notification);
    if (this.era === "modern") return listenModern(this.session, filter, deliver, options.signal);
    return listenLegacy(
      this.session,
      filter,
      (listener) => this.subscribe(listener),
      options.signal,
    );
  }

  /**
   * Sends any request: `_meta` and headers as the era wants, input rounds answered for the
   * methods that may ask, the per-round timeout applied, progress and logs routed.
   */
  async send(
    method: string,
    params: JsonObject = {},
    options: RequestOptions & { headers?: Record<string, string> } = {},
  ): Promise<JsonObject> {
    const meta: JsonObject = { ...options.meta };
    if (options.onProgress) meta.progressToken = `progress-${this.nextToken++}`;
    const signal = options.signal ?? new AbortController().signal;
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const once = (roundParams: JsonObject) => {
      const roundSignal =
        timeoutMs > 0 ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : signal;
      return this.session.request(method, roundParams, {
        signal: roundSignal,
        meta,
        ...(options.headers ? { headers: options.headers } : {}),
        onNotification: (notification) => this.onRequestNotification(notification, options),
      });
    };
    if (!["tools/call", "prompts/get", "resources/read"].includes(method)) return once(params);
    const name = params.name ?? params.uri;
    return withInput(method, params, once, {
      handlers: this.options.onInput ?? {},
      maxRounds: this.options.maxInputRounds ?? 8,
      signal,
      ...(typeof name === "string" ? { name } : {}),
    });
  }

  /** Ends the session (DELETE on legacy HTTP) and the transport (the child process on stdio). */
  async close(): Promise<void> {
    this.listeners.clear();
    await this.session.close();
  }

  private onRequestNotification(notification: Notification, options: RequestOptions): void {
    const params = notification.params ?? {};
    if (notification.method === "notifications/progress") {
      const progress: { progress: number; total?: number; message?: string } = {
        progress: Number(params.progress),
      };
      if (typeof params.total === "number") progress.total = params.total;
      if (typeof params.message === "string") progress.message = params.message;
      options.onProgress?.(progress);
      return;
    }
    this.deliver(notification);
  }

  /** Routes a notification that reached the client: logs, cache, listeners, the hook. */
  private deliver(notification: Notification): void {
    if (notification.method === "notifications/message") {
      this.options.onLog?.(notification.params as unknown as LogMessage);
    }
    this.cache.invalidate(notification);
    for (const listener of this.listeners) listener(notification);
    this.options.onNotification?.(notification);
  }

  private subscribe(listener: (notification: Notification) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private warn(message: string): void {
    (this.options.onWarning ?? console.warn)(message);
  }

  private cached(key: string, options: RequestOptions): unknown {
    return this.options.cache === false || options.fresh ? undefined : this.cache.get(key);
  }

  private keep(key: string, value: unknown, ttlMs: unknown): void {
    if (this.options.cache !== false) this.cache.set(key, value, ttlMs);
  }

  private async list(
    method: string,
    field: string,
    options: RequestOptions,
  ): Promise<JsonObject[]> {
    const cached = this.cached(method, options);
    if (cached) return cached as JsonObject[];
    const { items, ttlMs } = await listAll((params) => this.send(method, params, options), field);
    this.keep(method, items, ttlMs);
    return items;
  }
}
