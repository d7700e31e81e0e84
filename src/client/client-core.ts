import type { JsonObject } from "../protocol/messages.js";
import type { LogLevel } from "../protocol/versions.js";
import { ClientCache } from "./client-cache.js";
import { type CompletionRef, type CompletionValues, complete } from "./completion.js";
import { listen, type Subscription } from "./listen.js";
import { NotificationRouter } from "./notification-router.js";
import type { Listed, McpClientOptions } from "./options.js";
import { RequestRunner } from "./request-runner.js";
import type { ServerDescription, Session } from "./session.js";
import type { Tool } from "./tool.js";
import { asCallToolResult, type CallToolOptions, ToolCatalog } from "./tool-catalog.js";
import type {
  CallToolResult,
  Era,
  ListenFilter,
  ListenOptions,
  Notification,
  RequestOptions,
  ToolDefinition,
} from "./types.js";

/**
 * The core protocol's side of {@link McpClient}: the session, requests, tools, prompts,
 * resources and change notifications; `McpClient` adds connecting and the extensions.
 */
export abstract class ClientCore {
  readonly #session: Session;
  readonly #notifications: NotificationRouter;
  readonly #requests: RequestRunner;
  readonly #cache: ClientCache;
  readonly #catalog: ToolCatalog;

  protected constructor(session: Session, options: McpClientOptions) {
    this.#session = session;
    this.#cache = new ClientCache(options, session.wire);
    this.#notifications = new NotificationRouter(options, this.#cache);
    this.#requests = new RequestRunner(session, options, (notification) =>
      this.#notifications.deliver(notification),
    );
    this.#catalog = new ToolCatalog(
      options,
      session.wire.kind === "http" && session.era === "modern",
      (tool, args, callOptions) => this.callTool(tool.serverName, args, callOptions),
      (message) => (options.onWarning ?? console.warn)(message),
    );
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
  discover(options: RequestOptions = {}): Promise<ServerDescription> {
    return this.#requests.discover(options);
  }

  /**
   * The server's tools as {@link Tool} objects, every page. On HTTP a tool whose
   * `x-mcp-header` annotations break the spec's rules is left out, with a warning.
   *
   * @example
   * ```ts
   * import { McpClient, toAnthropicTools } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * const tools = toAnthropicTools((await client.tools()).filter((tool) => tool.readOnly));
   * ```
   */
  async tools(options: RequestOptions = {}): Promise<Tool[]> {
    const definitions = await this.#list("tools/list", "tools", options);
    return this.#catalog.toTools(definitions as ToolDefinition[]);
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
   *
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * const result = await client.callTool("forecast", { city: "Paris" }, { timeoutMs: 10_000 });
   * if (result.isError) console.error(result.content);
   * ```
   */
  async callTool(
    name: string,
    args: JsonObject = {},
    options: CallToolOptions = {},
  ): Promise<CallToolResult> {
    const call = () =>
      this.request(
        "tools/call",
        { name, arguments: args },
        this.#catalog.withHeaders(name, args, options),
      );
    try {
      return asCallToolResult(await call());
    } catch (error) {
      // The tool's schema changed since it was listed: list again and retry once
      // (spec: streamable-http, custom headers, client behavior).
      if (!this.#catalog.isStaleListing(name, error, options)) throw error;
      await this.tools({ ...options, fresh: true });
      return asCallToolResult(await call());
    }
  }

  /** Every prompt the server lists. */
  prompts(options: RequestOptions = {}): Promise<Listed[]> {
    return this.#list("prompts/list", "prompts", options);
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
    return this.#list("resources/list", "resources", options);
  }

  /** Every resource template the server lists. */
  resourceTemplates(options: RequestOptions = {}): Promise<Listed[]> {
    return this.#list("resources/templates/list", "resourceTemplates", options);
  }

  /** Reads a resource, answering input rounds; kept for its `ttlMs`. */
  readResource(uri: string, options: RequestOptions = {}): Promise<JsonObject> {
    return this.#cache.read(uri, options, () => this.request("resources/read", { uri }, options));
  }

  /** Completion values for a prompt or resource-template argument. */
  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    context?: { arguments: Record<string, string> },
    options: RequestOptions = {},
  ): Promise<CompletionValues> {
    return complete(this, { ref, argument, ...(context ? { context } : {}) }, options);
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
   *
   * @example
   * ```ts
   * import { McpClient } from "mcp-mount/client";
   * const client = await McpClient.connect("http://localhost:3000/mcp");
   * for await (const change of client.listen({ toolsListChanged: true })) {
   *   console.log(change.method, (await client.tools()).length);
   * }
   * ```
   */
  listen(filter: ListenFilter, options: ListenOptions = {}): Subscription {
    return this.#notifications.track(listen(this.#session, filter, this.#notifications, options));
  }

  /**
   * Sends any request: `_meta` and headers as the era wants, input rounds answered for the
   * methods that may ask, the per-round timeout applied, progress and logs routed.
   */
  request(
    method: string,
    params: JsonObject = {},
    options: RequestOptions & { headers?: Record<string, string> } = {},
  ): Promise<JsonObject> {
    return this.#requests.request(method, params, options);
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
    this.#requests.close();
    this.#notifications.close();
    await this.#session.close();
  }

  /** Hands a notification to the client's consumers (`onNotification`, `listen()`). */
  protected deliver(notification: Notification): void {
    this.#notifications.deliver(notification);
  }

  /** The request runner, for the extensions' follow-ups. */
  protected get requests(): RequestRunner {
    return this.#requests;
  }

  /** The session, for the extensions that ask what it speaks. */
  protected get session(): Session {
    return this.#session;
  }

  #list(method: string, field: string, options: RequestOptions): Promise<Listed[]> {
    return this.#cache.list(method, field, options, (params) =>
      this.request(method, params, options),
    ) as Promise<Listed[]>;
  }
}
