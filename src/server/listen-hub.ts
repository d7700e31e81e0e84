import { invalidParams } from "../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { MetaKey } from "../protocol/versions.js";
import { subscribe } from "../store/channels.js";
import type { EventBus } from "../store/types.js";
import { type BusChange, publishChange, ServerChannels } from "./channels.js";
import type { ChangeEvent, McpServer } from "./mcp-server.js";

/** What a `subscriptions/listen` request asked for (spec: patterns/subscriptions). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks whose status changes to send as `notifications/tasks` (tasks extension). */
  taskIds?: string[];
  /** `notifications/events/list_changed` (Events extension, when it serves the flag). */
  eventsListChanged?: boolean;
}

const FLAGS = [
  "toolsListChanged",
  "promptsListChanged",
  "resourcesListChanged",
  "eventsListChanged",
] as const;
const FLAG_OF: Record<"tools" | "prompts" | "resources" | "events", (typeof FLAGS)[number]> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
  events: "eventsListChanged",
};
/** Flags only an extension serves: honoured when one says it does (`listenFlags`). */
const EXTENSION_FLAGS: ReadonlySet<string> = new Set(["eventsListChanged"]);

/**
 * Reads and checks a listen filter; the result is the subset we honour: all of it, but the
 * extensions' flags that none of them serves (`served`), which the acknowledgement then omits.
 */
export function parseListenFilter(
  params: JsonObject,
  served: readonly string[] = [],
): ListenFilter {
  const raw = params.notifications ?? {};
  if (!isObject(raw)) throw invalidParams("notifications must be an object");
  const filter: ListenFilter = {};
  for (const flag of FLAGS) {
    const value = raw[flag];
    if (value === undefined) continue;
    if (typeof value !== "boolean") throw invalidParams(`notifications.${flag} must be a boolean`);
    if (value && (!EXTENSION_FLAGS.has(flag) || served.includes(flag))) filter[flag] = true;
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

/**
 * What a legacy session's stream wants: the core list changes and updates of the resources it
 * subscribed to; not tasks, nor event-type changes, which only a listen filter opts in to.
 */
export function sessionWants(event: ChangeEvent, subscriptions: ReadonlySet<string>): boolean {
  if (event.kind === "resource") return subscriptions.has(event.uri);
  return event.kind !== "task" && event.kind !== "events";
}

/** Stands in for a subscription id while a change is serialised; unique to this process. */
const ID_SLOT = `\u0000${globalThis.crypto.randomUUID()}`;
const ID_SLOT_JSON = JSON.stringify(ID_SLOT);

/**
 * A change's notification, serialised once however many streams it goes to: its JSON, and its
 * JSON tagged for a listen subscription as two halves around the subscription id.
 */
export class OutgoingChange {
  #json: string | undefined;
  #head: string | undefined;
  #tail = "";

  /** `eid`: the change's id, the same on every process that hears it (none for a local one). */
  constructor(
    readonly message: JsonRpcMessage,
    readonly eid?: string,
  ) {}

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

/** How many change ids a hub remembers, to deliver a change heard twice once. */
const HEARD_IDS = 4_096;

/**
 * Holds this process's long-lived streams and feeds them the change events every process
 * publishes on the bus: `server.notify*` publishes once, each process delivers to its own sinks.
 */
export class ListenHub {
  readonly #sinks = new Set<ChangeSink>();
  /** Ids of the changes heard lately, so one heard twice is delivered once. */
  readonly #heard = new Set<string>();
  readonly #options: ListenHubOptions;
  readonly #unsubscribe: Promise<() => Promise<void>>;
  readonly #stopServer: () => void;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #ended: { serverInfo: unknown } | undefined; // set once a drain ended the streams

  constructor(server: McpServer, options: ListenHubOptions) {
    this.#options = options;
    this.#unsubscribe = subscribe(options.bus, ServerChannels.changes, (event) =>
      this.#deliver(event),
    );
    this.#unsubscribe.catch(options.onError);
    this.#stopServer = server.onChange((event) => {
      publishChange(options.bus, event).catch(options.onError);
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

  /** Adds a sink (ended at once once a drain ended the streams); returns what removes it. */
  add(sink: ChangeSink): () => void {
    if (this.#ended) sink.end(this.#ended.serverInfo);
    else this.#sinks.add(sink);
    this.#startKeepAlive();
    return () => this.#sinks.delete(sink);
  }

  /** Ends every sink gracefully (a drain's first step); changes still reach other processes. */
  endStreams(serverInfo: unknown): void {
    this.#ended = { serverInfo };
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

  #deliver(event: BusChange): void {
    if (event.eid !== undefined) {
      if (this.#heard.has(event.eid)) return;
      this.#heard.add(event.eid);
      // A Set keeps insertion order: the first entry is the oldest id.
      if (this.#heard.size > HEARD_IDS) this.#heard.delete(this.#heard.values().next().value!);
    }
    const message = changeNotification(event);
    const change = new OutgoingChange(message, event.eid);
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
