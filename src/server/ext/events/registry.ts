import type { DeliveryMode } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { isObject } from "../../../protocol/messages.js";
import { publish } from "../../../store/channels.js";
import type { FeedEntry, McpStore } from "../../../store/types.js";
import { canonicalJson } from "../../../utils/canonical-json.js";
import type { Registration } from "../../registry.js";
import { compileSchema } from "../../schema.js";
import { encodeCursor } from "./cursor.js";
import type {
  EmitOptions,
  EmitResult,
  EventRegistration,
  EventRetention,
  EventTypes,
  EventTypesChange,
  RegisteredEvent,
  WebhookFanout,
} from "./types.js";
import { wakeChannel } from "./wake.js";

const EVENT_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const MODES: readonly DeliveryMode[] = ["poll", "push", "webhook"];

/** What a feed keeps when neither the registration nor the handler says. */
export const DEFAULT_RETENTION: Required<EventRetention> = { maxLen: 10_000, maxAgeMs: 3_600_000 };

/** A store the server is served from (one per handler or stdio server with Events on). */
export interface EventsAttachment {
  store: McpStore;
  retain: Required<EventRetention>;
  /** The handler's webhook fan-out, when it delivers webhooks. */
  fanOut?: WebhookFanout | undefined;
  onError(error: unknown): void;
}

/** An occurrence as its feed stores it (`FeedEntry.value`). */
export interface FeedOccurrence extends JsonObject {
  eventId: string;
  name: string;
  timestamp: string;
  data: JsonObject;
  /** The principal it is for (`issuer|subject`); for everyone when absent. */
  principal?: string;
  /** The canonical JSON of the arguments it is for; for every subscription when absent. */
  arguments?: string;
}

/** The principal key of an emit's `principal`, as `principalKey` (server/access.ts) makes it. */
function keyOf(principal: NonNullable<EmitOptions["principal"]>): string {
  if (typeof principal === "string") return principal;
  return `${principal.issuer ?? ""}|${principal.subject || principal.clientId || ""}`;
}

/** Compiles a registration; throws on a bad name, schema or delivery list. */
function compile(options: EventRegistration): RegisteredEvent {
  if (!EVENT_NAME.test(options.name)) throw new TypeError(`Invalid event name: ${options.name}`);
  const delivery = options.delivery ?? [...MODES];
  if (delivery.length === 0 || delivery.some((mode) => !MODES.includes(mode)))
    throw new TypeError(`Event ${options.name}: delivery must be a non-empty subset of ${MODES}`);
  const input = options.inputSchema ? compileSchema(options.inputSchema, "input") : undefined;
  const payload = options.payloadSchema
    ? compileSchema(options.payloadSchema, "output")
    : undefined;
  const descriptor: RegisteredEvent["descriptor"] = {
    name: options.name,
    delivery: [...new Set(delivery)],
    inputSchema: input?.json ?? { type: "object" },
  };
  if (options.description !== undefined) descriptor.description = options.description;
  if (payload) descriptor.payloadSchema = payload.json;
  if (options._meta !== undefined) descriptor._meta = options._meta;
  return { options, input, payload, descriptor };
}

/**
 * The event types of one server (`server.event`), the stores it is served from, and `emit`:
 * an occurrence is appended to the feed of every such store, which wakes the push streams of
 * every process on its bus and hands it to the store's webhook fan-out.
 */
export class EventRegistry implements EventTypes {
  readonly events = new Map<string, RegisteredEvent>();
  readonly #attachments = new Set<EventsAttachment>();
  readonly #listeners = new Set<(change: EventTypesChange) => void>();

  /** Registers an event type; its removal ends the subscriptions to it. */
  register(options: EventRegistration): Registration {
    if (this.events.has(options.name)) throw new TypeError(`Duplicate event: ${options.name}`);
    const entry = compile(options);
    this.events.set(options.name, entry);
    this.#changed({ name: options.name, removed: false });
    return {
      remove: () => {
        if (this.events.get(options.name) !== entry) return;
        this.events.delete(options.name);
        this.#changed({ name: options.name, removed: true });
      },
    };
  }

  /** Serves the events from one more store; returns the function that stops it. */
  attach(attachment: EventsAttachment): () => void {
    this.#attachments.add(attachment);
    return () => this.#attachments.delete(attachment);
  }

  /** Listens to changes of the event types; returns the function that stops listening. */
  onChange(listener: (change: EventTypesChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Emits an occurrence: see `McpServer.emit`. */
  async emit(name: string, data: JsonObject, options: EmitOptions = {}): Promise<EmitResult> {
    const event = this.events.get(name);
    if (!event) throw new TypeError(`Unknown event: ${name}`);
    if (!isObject(data)) throw new TypeError(`Event ${name}: data must be an object`);
    const checked = await event.payload?.validate(data);
    if (checked && !checked.ok)
      throw new TypeError(
        `Event ${name}: data does not match its payloadSchema: ${checked.message}`,
      );
    const stores = this.#stores();
    if (stores.length === 0)
      throw new Error(`Event ${name}: the server is not served with Events (no handler or stdio)`);
    const value = occurrenceOf(name, data, options);
    const seqs = await Promise.all(
      stores.map((attachment) => this.#append(attachment, event, value, options.eventId)),
    );
    return { eventId: value.eventId, cursor: encodeCursor(name, seqs[0]!) };
  }

  /** One attachment per store (two handlers may share one), those with a fan-out first. */
  #stores(): EventsAttachment[] {
    const byStore = new Map<McpStore, EventsAttachment>();
    for (const attachment of this.#attachments) {
      const known = byStore.get(attachment.store);
      if (!known || (!known.fanOut && attachment.fanOut)) byStore.set(attachment.store, attachment);
    }
    return [...byStore.values()];
  }

  async #append(
    attachment: EventsAttachment,
    event: RegisteredEvent,
    value: FeedOccurrence,
    dedupKey: string | undefined,
  ): Promise<string> {
    const { store } = attachment;
    const name = event.descriptor.name;
    const retain = { ...attachment.retain, ...event.options.retain };
    const { seq, appended } = await store.feeds!.append(name, value, retain, dedupKey);
    // An eventId emitted already: the earlier occurrence stands, announced and fanned out then.
    if (!appended) return seq;
    // A wake-up only: readers read the feed from their own position, and a lost wake-up is
    // made up for by their next heartbeat's read. The occurrence is stored either way.
    publish(store.bus, wakeChannel(name), { s: seq }).catch(attachment.onError);
    const entry: FeedEntry = { seq, at: Number(seq.split("-")[0]), value };
    await attachment.fanOut?.({ store, registration: event, now: Date.now() }, entry);
    return seq;
  }

  #changed(change: EventTypesChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}

/** The feed's record of an occurrence. */
function occurrenceOf(name: string, data: JsonObject, options: EmitOptions): FeedOccurrence {
  const { timestamp } = options;
  const value: FeedOccurrence = {
    eventId: options.eventId ?? crypto.randomUUID(),
    name,
    timestamp:
      timestamp === undefined
        ? new Date().toISOString()
        : new Date(timestamp instanceof Date ? timestamp : Date.parse(timestamp)).toISOString(),
    data,
  };
  if (options.principal !== undefined) value.principal = keyOf(options.principal);
  if (options.arguments !== undefined) value.arguments = canonicalJson(options.arguments);
  return value;
}

const registries = new WeakMap<object, EventRegistry>();

/** The event registry of `server` (made on first use). */
export function eventsOf(server: object): EventRegistry {
  let registry = registries.get(server);
  if (!registry) {
    registry = new EventRegistry();
    registries.set(server, registry);
  }
  return registry;
}
