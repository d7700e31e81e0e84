import { invalidParams } from "../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { MetaKey } from "../protocol/versions.js";
import { publish, subscribe } from "../store/channels.js";
import type { EventBus } from "../store/types.js";
import { ServerChannels } from "./channels.js";
import type { ChangeEvent, McpServer } from "./mcp-server.js";

/** What a `subscriptions/listen` request asked for (spec: patterns/subscriptions). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks whose status changes to send as `notifications/tasks` (tasks extension). */
  taskIds?: string[];
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
  const taskIds = raw.taskIds;
  if (taskIds !== undefined) {
    if (!Array.isArray(taskIds) || taskIds.some((id) => typeof id !== "string")) {
      throw invalidParams("notifications.taskIds must be an array of strings");
    }
    filter.taskIds = [...new Set(taskIds as string[])];
  }
  return filter;
}

/** The notification a change event becomes. */
export function changeNotification(event: ChangeEvent): JsonRpcMessage {
  if (event.kind === "task") {
    return { jsonrpc: "2.0", method: "notifications/tasks", params: event.task };
  }
  if (event.kind === "resource") {
    return {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: event.uri },
    };
  }
  return { jsonrpc: "2.0", method: `notifications/${event.kind}/list_changed` };
}

/** Stands in for a subscription id while a change is serialised; unique to this process. */
const ID_SLOT = `\u0000${globalThis.crypto.randomUUID()}`;
const ID_SLOT_JSON = JSON.stringify(ID_SLOT);

/**
 * A change's notification, serialised once however many streams it goes to: its JSON, and its
 * JSON tagged for a listen subscription as two halves around the subscription id.
 */
export class OutgoingChange {
  readonly message: JsonRpcMessage;
  #json: string | undefined;
  #head: string | undefined;
  #tail = "";

  constructor(message: JsonRpcMessage) {
    this.message = message;
  }

  /** The notification's JSON text. */
  get json(): string {
    this.#json ??= JSON.stringify(this.message);
    return this.#json;
  }

  /** The JSON text of the notification tagged with the subscription whose id is `idJson`. */
  taggedJson(idJson: string): string {
    if (this.#head === undefined) {
      const json = JSON.stringify(tagged(this.message, ID_SLOT));
      const at = json.indexOf(ID_SLOT_JSON);
      this.#head = json.slice(0, at);
      this.#tail = json.slice(at + ID_SLOT_JSON.length);
    }
    return this.#head + idJson + this.#tail;
  }
}

/** Where a listen subscription writes: an SSE stream, or a stdio channel. */
export interface MessageWriter {
  send(message: JsonRpcMessage): unknown;
  /** Sends a message already serialised as one line of JSON, when the writer can. */
  sendJson?(json: string): unknown;
  /** Writes transport-level text such as an SSE comment; may do nothing. */
  writeRaw(text: string): unknown;
  close(): void;
}

/** Something that receives change events: a modern listen stream or a legacy GET stream. */
export interface ChangeSink {
  wants(event: ChangeEvent): boolean;
  /** Sends the change's notification; `change` has it serialised, once for every sink. */
  deliver(message: JsonRpcMessage, change: OutgoingChange): void;
  /** Writes an SSE comment so idle connections stay open. */
  keepAlive(): void;
  /** Ends the sink on shutdown. */
  end(serverInfo: unknown): void;
}

function tagged(message: JsonRpcMessage, id: RequestId): JsonRpcMessage {
  const params: JsonObject = "params" in message && message.params ? { ...message.params } : {};
  params._meta = { ...(isObject(params._meta) ? params._meta : {}), [MetaKey.subscriptionId]: id };
  return { ...message, params } as JsonRpcMessage;
}

/**
 * A modern listen subscription on `stream`: acknowledges at once (spec: subscriptions), then
 * tags everything with the listen request's id; on shutdown, answers the listen request.
 */
export function listenSink(
  id: RequestId,
  stream: MessageWriter,
  filter: ListenFilter,
  principal = "",
): ChangeSink {
  // No empty sets kept per stream: most listen for list changes only.
  const uris = filter.resourceSubscriptions?.length ? new Set(filter.resourceSubscriptions) : NONE;
  const tasks = filter.taskIds?.length ? new Set(filter.taskIds) : NONE;
  const idJson = JSON.stringify(id);
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
  return {
    wants(event) {
      // Task ids are unguessable, but only their own principal hears of them.
      if (event.kind === "task") return tasks.has(event.taskId) && event.principal === principal;
      if (event.kind === "resource") return uris.has(event.uri);
      return filter[FLAG_OF[event.kind]] === true;
    },
    deliver(message, change) {
      if (stream.sendJson) stream.sendJson(change.taggedJson(idJson));
      else stream.send(tagged(message, id));
    },
    keepAlive: () => stream.writeRaw(":\n\n"),
    end(serverInfo) {
      const meta = { [MetaKey.subscriptionId]: id, [MetaKey.serverInfo]: serverInfo };
      stream.send({ jsonrpc: "2.0", id, result: { resultType: "complete", _meta: meta } });
      stream.close();
    },
  };
}

const NONE: ReadonlySet<string> = new Set();

/** Options of {@link ListenHub}. */
export interface ListenHubOptions {
  bus: EventBus;
  keepAliveMs: number;
  onError: (error: unknown) => void;
}

/**
 * Holds this process's long-lived streams and feeds them the change events every process
 * publishes on the bus: `server.notify*` publishes once, each process delivers to its own sinks.
 */
export class ListenHub {
  readonly #sinks = new Set<ChangeSink>();
  readonly #options: ListenHubOptions;
  readonly #unsubscribe: Promise<() => Promise<void>>;
  readonly #stopServer: () => void;
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(server: McpServer, options: ListenHubOptions) {
    this.#options = options;
    this.#unsubscribe = subscribe(options.bus, ServerChannels.changes, (event) =>
      this.#deliver(event),
    );
    this.#unsubscribe.catch(options.onError);
    this.#stopServer = server.onChange((event) => {
      publish(options.bus, ServerChannels.changes, event).catch(options.onError);
    });
  }

  /** Resolves once this hub hears change events from every process. */
  get ready(): Promise<void> {
    return this.#unsubscribe.then(() => undefined);
  }

  /** Number of sinks: open streams, and legacy GET streams waiting for their client. */
  get size(): number {
    return this.#sinks.size;
  }

  /** Adds a sink; returns the function that removes it. */
  add(sink: ChangeSink): () => void {
    this.#sinks.add(sink);
    this.#startKeepAlive();
    return () => this.#sinks.delete(sink);
  }

  /** Ends every sink gracefully (a drain's first step); changes still reach other processes. */
  endStreams(serverInfo: unknown): void {
    for (const sink of [...this.#sinks]) sink.end(serverInfo);
    this.#sinks.clear();
  }

  /** Ends every sink gracefully, then stops relaying changes and listening to the bus. */
  async close(serverInfo: unknown): Promise<void> {
    clearInterval(this.#keepAlive);
    this.#stopServer();
    this.endStreams(serverInfo);
    await (await this.#unsubscribe.catch(() => async () => {}))();
  }

  #deliver(event: ChangeEvent): void {
    const message = changeNotification(event);
    const change = new OutgoingChange(message);
    for (const sink of this.#sinks) {
      if (sink.wants(event)) sink.deliver(message, change);
    }
  }

  #startKeepAlive(): void {
    if (this.#keepAlive || this.#options.keepAliveMs <= 0) return;
    this.#keepAlive = setInterval(() => {
      if (this.#sinks.size === 0) {
        clearInterval(this.#keepAlive);
        this.#keepAlive = undefined;
        return;
      }
      for (const sink of this.#sinks) sink.keepAlive();
    }, this.#options.keepAliveMs);
    // Keep-alives alone must not hold the process open.
    (this.#keepAlive as { unref?: () => void }).unref?.();
  }
}
