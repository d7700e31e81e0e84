import { invalidParams } from "../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { MetaKey } from "../protocol/versions.js";
import type { ChangeEvent, McpServer } from "../server/mcp-server.js";
import type { EventBus } from "../store/types.js";
import type { SseStream } from "./sse.js";

/** What a `subscriptions/listen` request asked for (spec: patterns/subscriptions). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

const FLAGS = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;
const FLAG_OF: Record<"tools" | "prompts" | "resources", (typeof FLAGS)[number]> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
};

/** Reads and checks a listen filter; the result is the subset we honour (all of it). */
export function parseListenFilter(params: JsonObject): ListenFilter {
  const raw = params.notifications ?? {};
  if (!isObject(raw)) throw invalidParams("notifications must be an object");
  const filter: ListenFilter = {};
  for (const flag of FLAGS) {
    const value = raw[flag];
    if (value === undefined) continue;
    if (typeof value !== "boolean") throw invalidParams(`notifications.${flag} must be a boolean`);
    if (value) filter[flag] = true;
  }
  const uris = raw.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || uris.some((uri) => typeof uri !== "string")) {
      throw invalidParams("notifications.resourceSubscriptions must be an array of strings");
    }
    filter.resourceSubscriptions = [...new Set(uris as string[])];
  }
  return filter;
}

/** The notification a change event becomes. */
export function changeNotification(event: ChangeEvent): JsonRpcMessage {
  if (event.kind === "resource") {
    return {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: event.uri },
    };
  }
  return { jsonrpc: "2.0", method: `notifications/${event.kind}/list_changed` };
}

interface Listener {
  id: RequestId;
  stream: SseStream;
  filter: ListenFilter;
  uris: Set<string>;
}

function wants(listener: Listener, event: ChangeEvent): boolean {
  return event.kind === "resource"
    ? listener.uris.has(event.uri)
    : listener.filter[FLAG_OF[event.kind]] === true;
}

function tagged(message: JsonRpcMessage, id: RequestId): JsonRpcMessage {
  const params: JsonObject = "params" in message && message.params ? { ...message.params } : {};
  params._meta = { ...(isObject(params._meta) ? params._meta : {}), [MetaKey.subscriptionId]: id };
  return { ...message, params } as JsonRpcMessage;
}

/** Options of {@link ListenHub}. */
export interface ListenHubOptions {
  bus: EventBus;
  /** Bus channel of change events. */
  channel: string;
  keepAliveMs: number;
  maxStreams: number;
  onError: (error: unknown) => void;
}

/**
 * Holds this process's listen streams and feeds them the change events every process publishes
 * on the bus; `server.notify*` publishes once and each process delivers to its own streams.
 */
export class ListenHub {
  readonly #listeners = new Set<Listener>();
  readonly #options: ListenHubOptions;
  readonly #unsubscribe: Promise<() => Promise<void>>;
  readonly #stopServer: () => void;
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(server: McpServer, options: ListenHubOptions) {
    this.#options = options;
    this.#unsubscribe = options.bus.subscribe(options.channel, (message) =>
      this.#deliver(message as ChangeEvent),
    );
    this.#unsubscribe.catch(options.onError);
    this.#stopServer = server.onChange((event) => {
      options.bus.publish(options.channel, event).catch(options.onError);
    });
  }

  /** True when another stream may open. */
  hasRoom(): boolean {
    return this.#listeners.size < this.#options.maxStreams;
  }

  /** Number of open streams. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Opens a listen subscription on `stream`: acknowledges, then delivers matching events. */
  add(id: RequestId, stream: SseStream, filter: ListenFilter): void {
    const listener: Listener = { id, stream, filter, uris: new Set(filter.resourceSubscriptions) };
    stream.send(
      tagged(
        {
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { notifications: { ...filter } },
        },
        id,
      ),
    );
    this.#listeners.add(listener);
    stream.onClose(() => this.#listeners.delete(listener));
    this.#startKeepAlive();
  }

  /** Ends every subscription gracefully: its own `complete` response, then close. */
  async close(serverInfo: unknown): Promise<void> {
    clearInterval(this.#keepAlive);
    this.#stopServer();
    for (const listener of [...this.#listeners]) {
      const meta = { [MetaKey.subscriptionId]: listener.id, [MetaKey.serverInfo]: serverInfo };
      listener.stream.send({
        jsonrpc: "2.0",
        id: listener.id,
        result: { resultType: "complete", _meta: meta },
      });
      listener.stream.close();
    }
    this.#listeners.clear();
    await (await this.#unsubscribe.catch(() => async () => {}))();
  }

  #deliver(event: ChangeEvent): void {
    const message = changeNotification(event);
    for (const listener of this.#listeners) {
      if (wants(listener, event)) listener.stream.send(tagged(message, listener.id));
    }
  }

  #startKeepAlive(): void {
    if (this.#keepAlive || this.#options.keepAliveMs <= 0) return;
    this.#keepAlive = setInterval(() => {
      if (this.#listeners.size === 0) {
        clearInterval(this.#keepAlive);
        this.#keepAlive = undefined;
        return;
      }
      for (const listener of this.#listeners) listener.stream.raw(":\n\n");
    }, this.#options.keepAliveMs);
    // Keep-alives alone must not hold the process open.
    (this.#keepAlive as { unref?: () => void }).unref?.();
  }
}
