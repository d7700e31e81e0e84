import { ErrorCode, isMcpError } from "../protocol/errors.js";
import { findHeaderParams, type HeaderParam, HeaderParamError } from "../protocol/header-params.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import { type CacheSlot, hintsOf, ResultCache } from "./cache.js";
import { type EraOptions, endpointKey, openSession, rememberedEras } from "./connect.js";
import { headerParamValues } from "./header-params.js";
import { HttpWire } from "./http-wire.js";
import { answerInput, capabilitiesFor, inputContextOf, withInput } from "./input.js";
import { listenLegacy, listenModern, type Subscription } from "./listen.js";
import type { Listed, McpClientOptions } from "./options.js";
import { listAll } from "./pages.js";
import type { ServerDescription, Session } from "./session.js";
import { awaitTask, invalidTask, TASKS_DECLARED, type TaskLoop } from "./tasks.js";
import { IdleTimeout, joinSignals } from "./timeout.js";
import { Tool } from "./tool.js";
import type {
  CallToolResult,
  Era,
  ListenFilter,
  ListenOptions,
  LogMessage,
  Notification,
  RequestOptions,
  ToolDefinition,
} from "./types.js";
import type { Wire } from "./wire.js";

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A dual-era MCP client: modern (2026-07-28, stateless, multi round-trip input) or legacy
 * (`initialize` and a session), over Streamable HTTP or any other {@link Wire} such as stdio.
 */
export class McpClient {
  readonly #session: Session;
  readonly #options: McpClientOptions;
  readonly #cache: ResultCache | undefined;
  readonly #slot: CacheSlot;
  readonly #listeners = new Set<(notification: Notification) => void>();
  /** The Tool made of each definition listed (null: excluded). */
  readonly #tools = new WeakMap<ToolDefinition, Tool | null>();
  /** Open `listen()` iterators, ended with the client. */
  readonly #subscriptions = new Set<Subscription>();
  /** The `x-mcp-header` parameters of each tool last listed, by server name. */
  readonly #headerParams = new Map<string, HeaderParam[]>();
  #nextToken = 1;
  /** Aborted by `close()`: tasks still being followed stop, and are left to run. */
  readonly #closing = new AbortController();

  private constructor(session: Session, options: McpClientOptions) {
    this.#session = session;
    this.#options = options;
    this.#cache =
      options.cache === false
        ? undefined
        : options.cache instanceof ResultCache
          ? options.cache
          : new ResultCache();
    const own = crypto.randomUUID();
    const wire = session.wire;
    this.#slot = {
      endpoint: wire instanceof HttpWire ? endpointKey(wire.url) : own,
      context: options.cacheContext ?? own,
    };
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
    // What arrives while the session opens (a legacy GET stream) is handed on once it is open.
    const early: Notification[] = [];
    wire.handlers = {
      notification: (notification) =>
        client ? client.deliver(notification) : early.push(notification),
      request: (method, params, origin) =>
        answerInput(handlers, method, params, inputContextOf(origin)),
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
    for (const notification of early.splice(0)) client.deliver(notification);
    return client;
  }

  /** The era this client speaks with the server. */
  get era(): Era {
    return this.#session.era;
  }

  /** The protocol version in use. */
  get protocolVersion(): string {
    return this.#session.protocolVersion;
  }

  /** What the server said about itself: info, capabilities, instructions, versions. */
  get server(): ServerDescription {
    return this.#session.server;
  }

  /** Re-reads `server/discover` (modern); a legacy session answers from `initialize`. */
  async discover(options: RequestOptions = {}): Promise<ServerDescription> {
    const timeout = this.#timeout(options);
    try {
      return await this.#session.discover({ signal: joinSignals(options.signal, timeout) });
    } finally {
      timeout?.clear();
    }
  }

  /**
   * The server's tools as {@link Tool} objects, every page. On HTTP a tool whose
   * `x-mcp-header` annotations break the spec's rules is left out, with a warning.
   */
  async tools(options: RequestOptions = {}): Promise<Tool[]> {
    const definitions = (await this.#list("tools/list", "tools", options)) as ToolDefinition[];
    const tools: Tool[] = [];
    for (const definition of definitions) {
      // A cached listing hands back the same definitions: their Tools (and compiled schemas)
      // are reused, and an excluded tool is warned about once.
      let tool = this.#tools.get(definition);
      if (tool === undefined) {
        tool = this.#toTool(definition);
        this.#tools.set(definition, tool);
      }
      if (tool) tools.push(tool);
    }
    return tools;
  }

  #toTool(definition: ToolDefinition): Tool | null {
    if (this.#session.wire.kind === "http" && this.era === "modern") {
      try {
        this.#headerParams.set(definition.name, findHeaderParams(definition.inputSchema ?? {}));
      } catch (error) {
        if (!(error instanceof HeaderParamError)) throw error;
        this.#warn(`Tool ${definition.name} excluded: ${error.message}`);
        return null;
      }
    }
    return new Tool(
      definition,
      this.#options,
      (tool, args, callOptions) => this.callTool(tool.serverName, args, callOptions),
      (message) => this.#warn(message),
    );
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
      const headerParams = this.#headerParams.get(name);
      return options.headers || !headerParams
        ? options
        : { ...options, headers: headerParamValues(headerParams, args) };
    };
    let result: JsonObject;
    try {
      result = await this.request("tools/call", { name, arguments: args }, mirrored());
    } catch (error) {
      // The tool's schema changed since it was listed: list again and retry once
      // (spec: streamable-http, custom headers, client behavior).
      if (!(isMcpError(error) && error.code === ErrorCode.HeaderMismatch)) throw error;
      if (options.headers || !this.#headerParams.has(name)) throw error;
      await this.tools({ ...options, fresh: true });
      result = await this.request("tools/call", { name, arguments: args }, mirrored());
    }
    return asCallToolResult(result);
  }

  /** Every prompt the server lists. */
  prompts(options: RequestOptions = {}): Promise<Listed[]> {
    return this.#list("prompts/list", "prompts", options) as Promise<Listed[]>;
  }

  /** Gets a prompt with its arguments, answering input rounds. */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: RequestOptions = {},
  ): Promise<JsonObject> {
    return this.request("prompts/get", { name, arguments: args }, options);
  }

  /** Every resource the server lists. */
  resources(options: RequestOptions = {}): Promise<Listed[]> {
    return this.#list("resources/list", "resources", options) as Promise<Listed[]>;
  }

  /** Every resource template the server lists. */
  resourceTemplates(options: RequestOptions = {}): Promise<Listed[]> {
    return this.#list("resources/templates/list", "resourceTemplates", options) as Promise<
      Listed[]
    >;
  }

  /** Reads a resource, answering input rounds; kept for its `ttlMs`. */
  async readResource(uri: string, options: RequestOptions = {}): Promise<JsonObject> {
    const key = `resources/read ${uri}`;
    const cached = this.#cached(key, options);
    if (cached) return cached as JsonObject;
    const result = await this.request("resources/read", { uri }, options);
    this.#cache?.set(this.#slot, key, result, hintsOf(result));
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
    const result = await this.request("completion/complete", params, options);
    return (isObject(result.completion) ? result.completion : { values: [] }) as {
      values: string[];
    };
  }

  /**
   * Change notifications as an async iterator: a `subscriptions/listen` stream (modern), or
   * the session's GET stream and resource subscriptions (legacy, resumed by the transport with
   * `Last-Event-ID`, see `maxReconnects`). A modern stream that drops or that the server
   * completes is listened to again with `reconnect`'s backoff (250 ms doubling to 5 s, jittered,
   * 10 attempts in a row); once the new stream is acknowledged, a notification marked
   * `params._meta["mcp-mount/resync"]` is yielded for each list kind and resource the filter
   * asks for (and the cached results they cover are dropped), since what changed meanwhile is
   * lost. `break`, `close()`, `signal` and `client.close()` end it cleanly; it throws when
   * reconnection gives up, or on a drop with `reconnect: false`.
   */
  listen(filter: ListenFilter, options: ListenOptions = {}): Subscription {
    const deliver = (notification: Notification) => this.deliver(notification);
    const subscription =
      this.era === "modern"
        ? listenModern(this.#session, filter, deliver, options)
        : listenLegacy(
            this.#session,
            filter,
            (listener) => this.#subscribe(listener),
            options.signal,
          );
    this.#subscriptions.add(subscription);
    const close = subscription.close.bind(subscription);
    subscription.close = () => {
      this.#subscriptions.delete(subscription);
      close();
    };
    return subscription;
  }

  /**
   * Sends any request: `_meta` and headers as the era wants, input rounds answered for the
   * methods that may ask, the per-round timeout applied, progress and logs routed.
   */
  async request(
    method: string,
    params: JsonObject = {},
    options: RequestOptions & { headers?: Record<string, string> } = {},
  ): Promise<JsonObject> {
    const meta: JsonObject = { ...options.meta };
    if (options.onProgress) meta.progressToken = `progress-${this.#nextToken++}`;
    const once = (roundParams: JsonObject) => this.#roundTrip(method, roundParams, options, meta);
    const name = params.name ?? params.uri;
    const result = ["tools/call", "prompts/get", "resources/read"].includes(method)
      ? await withInput(method, params, once, {
          handlers: this.#options.onInput ?? {},
          maxRounds: this.#options.maxInputRounds ?? 8,
          signal: options.signal ?? new AbortController().signal,
          ...(typeof name === "string" ? { name } : {}),
        })
      : await once(params);
    if (result.resultType !== "task") return result;
    // Only a request that declared the extension may get a task (ext-tasks: capability negotiation).
    if (!this.#declaresTasks(method) || method !== "tools/call") {
      throw invalidTask(`The server answered ${method} with a task it was not offered`);
    }
    return awaitTask(result, this.#taskLoop(options, typeof name === "string" ? name : undefined));
  }

  /**
   * Follows a task the server created for a `tools/call` (its `taskId`, as `onTask` saw it) to
   * its result, as `callTool` does: a restarted app picks up where it left off.
   */
  async resumeTask(taskId: string, options: RequestOptions = {}): Promise<CallToolResult> {
    const loop = this.#taskLoop(options, undefined);
    const state = await loop.send("tasks/get", { taskId }, options.signal);
    return asCallToolResult(await awaitTask(state, loop));
  }

  #taskLoop(options: RequestOptions, name: string | undefined): TaskLoop {
    // Polls carry no progress token: progress does not apply to tasks (ext-tasks).
    const { timeoutMs } = options;
    const closing = this.#closing.signal;
    const signal = options.signal ? AbortSignal.any([options.signal, closing]) : closing;
    const loop: TaskLoop = {
      send: (method, params, roundSignal) =>
        this.#roundTrip(
          method,
          params,
          {
            ...(roundSignal ? { signal: roundSignal } : {}),
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          },
          {},
        ),
      handlers: this.#options.onInput ?? {},
      signal,
      detach: closing,
    };
    if (name !== undefined) loop.name = name;
    if (options.onTask) loop.onTask = options.onTask;
    return loop;
  }

  /** One round trip: the timeout, headers and per-request extensions applied, notifications routed. */
  async #roundTrip(
    method: string,
    params: JsonObject,
    options: RequestOptions & { headers?: Record<string, string> },
    meta: JsonObject,
  ): Promise<JsonObject> {
    const timeout = this.#timeout(options);
    try {
      return await this.#session.request(method, params, {
        signal: joinSignals(options.signal, timeout),
        meta,
        ...(options.headers ? { headers: options.headers } : {}),
        ...(this.#declaresTasks(method) ? { extensions: TASKS_DECLARED } : {}),
        onNotification: (notification) => {
          if (notification.method === "notifications/progress") timeout?.touch();
          this.#onRequestNotification(notification, options);
        },
      });
    } finally {
      timeout?.clear();
    }
  }

  /**
   * The tasks extension goes on `tools/call` and the `tasks/*` methods of the modern era, unless
   * turned off; legacy sessions never declare it, so their calls block.
   */
  #declaresTasks(method: string): boolean {
    if (this.#options.tasks === false || this.era !== "modern") return false;
    return method === "tools/call" || method.startsWith("tasks/");
  }

  /** The round trip's timeout, unless turned off with 0. */
  #timeout(options: RequestOptions): IdleTimeout | undefined {
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return timeoutMs > 0 ? new IdleTimeout(timeoutMs) : undefined;
  }

  /** Asks for the server's log messages at `level` and above from now on (see `onLog`). */
  setLogLevel(level: LogLevel | undefined): Promise<void> {
    return this.#session.setLogLevel(level);
  }

  /**
   * Tells a legacy server that the roots `onInput.roots` returns have changed, so it asks
   * again; modern servers ask on every request that needs them, so there is nothing to send.
   */
  rootsChanged(): Promise<void> {
    return this.#session.rootsChanged();
  }

  /** Ends the session (DELETE on legacy HTTP) and the transport (the child process on stdio). */
  async close(): Promise<void> {
    this.#closing.abort(new Error("The client was closed"));
    for (const subscription of this.#subscriptions) subscription.close();
    this.#subscriptions.clear();
    this.#listeners.clear();
    await this.#session.close();
  }

  #onRequestNotification(notification: Notification, options: RequestOptions): void {
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
      this.#options.onLog?.(notification.params as unknown as LogMessage);
    }
    this.#cache?.invalidate(this.#slot.endpoint, notification);
    for (const listener of this.#listeners) listener(notification);
    this.#options.onNotification?.(notification);
  }

  #subscribe(listener: (notification: Notification) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #warn(message: string): void {
    (this.#options.onWarning ?? console.warn)(message);
  }

  #cached(key: string, options: RequestOptions): unknown {
    return options.fresh ? undefined : this.#cache?.get(this.#slot, key);
  }

  async #list(method: string, field: string, options: RequestOptions): Promise<JsonObject[]> {
    const cached = this.#cached(method, options);
    if (cached) return cached as JsonObject[];
    const { items, hints } = await listAll(
      (params) => this.request(method, params, options),
      field,
    );
    this.#cache?.set(this.#slot, method, items, hints);
    return items;
  }
}

/** A `tools/call` result with its `content` always an array. */
function asCallToolResult(result: JsonObject): CallToolResult {
  return {
    ...result,
    content: Array.isArray(result.content) ? result.content : [],
  } as CallToolResult;
}
