import type { DeliveryMode, EventOccurrence } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { FeedEntry, McpStore } from "../../../store/types.js";
import type { CompiledSchema, SchemaInput } from "../../schema.js";
import type { AuthInfo } from "../../types.js";
import type { WebhookOptions } from "./webhooks/options.js";

/**
 * Whom an occurrence is being delivered to: what `match`, `transform` and `authorize` see of a
 * subscription besides its arguments.
 */
export interface EventContext {
  /** The subscriber's principal as `principalKey` writes it (`issuer|subject`); "" without auth. */
  principal: string;
  /** The subscribing request's auth (poll and push); absent for webhook deliveries. */
  auth?: AuthInfo;
  /** How the occurrence travels. */
  delivery: DeliveryMode;
}

/** How long a feed keeps occurrences, for polls and streams resuming with a cursor. */
export interface EventRetention {
  /** Most occurrences kept per event type. @default 10_000 */
  maxLen?: number;
  /** Longest an occurrence is kept, in milliseconds. @default 3_600_000 */
  maxAgeMs?: number;
}

/** What `server.event()` registers: an event type (SEP-3415's `EventDescriptor`) and its hooks. */
export interface EventRegistration {
  /** The event type's name (letters, digits, `_`, `.`, `-`; up to 128). */
  name: string;
  description?: string;
  /** Schema of the subscription arguments (JSON Schema or Standard Schema). @default { type: "object" } */
  inputSchema?: SchemaInput;
  /** Schema of the occurrences' `data`: `emit` refuses data it rejects. */
  payloadSchema?: SchemaInput;
  /**
   * The modes it offers; a mode the handler cannot serve (webhook without `events.webhooks`)
   * is left out of `events/list`. @default ["poll", "push", "webhook"]
   */
  delivery?: DeliveryMode[];
  /** Metadata listed with the descriptor. */
  _meta?: JsonObject;
  /** How long its feed keeps occurrences. @default the handler's `events.retain` */
  retain?: EventRetention;
  /** Whether a subscription with `args` may have this occurrence. @default every one */
  match?(
    ctx: EventContext,
    occurrence: EventOccurrence,
    args: JsonObject,
  ): boolean | Promise<boolean>;
  /** Shapes the occurrence for one subscription (redaction, expansion). @default as emitted */
  transform?(
    ctx: EventContext,
    occurrence: EventOccurrence,
    args: JsonObject,
  ): EventOccurrence | Promise<EventOccurrence>;
  /** Whether the principal may subscribe with `args`; false answers `Forbidden`. @default allowed */
  authorize?(ctx: EventContext, args: JsonObject): boolean | Promise<boolean>;
}

/** An event type as the registry holds it: its options and compiled schemas. */
export interface RegisteredEvent {
  readonly options: EventRegistration;
  readonly input: CompiledSchema | undefined;
  readonly payload: CompiledSchema | undefined;
  /** The descriptor `events/list` shows, before the handler narrows `delivery`. */
  readonly descriptor: JsonObject & { name: string; delivery: DeliveryMode[] };
}

/** Options of `server.emit()`. */
export interface EmitOptions {
  /**
   * Delivers it to this principal's subscriptions only: an `AuthInfo` (or its `principalKey`
   * string, `issuer|subject`).
   */
  principal?: Pick<AuthInfo, "issuer" | "subject" | "clientId"> | string;
  /** Delivers it to subscriptions with exactly these arguments only (canonical JSON equality). */
  arguments?: JsonObject;
  /** The upstream's stable id; emitting the same id twice within the retention keeps one. @default a random id */
  eventId?: string;
  /** When it happened. @default now */
  timestamp?: Date | string;
}

/** What `server.emit()` resolves to. */
export interface EmitResult {
  eventId: string;
  /** Its position in the feed, as a cursor a subscriber could resume after. */
  cursor: string;
}

/**
 * What one handler's webhook module gets when an occurrence was appended: it enqueues one
 * delivery per webhook subscription the occurrence is for.
 */
export interface FanoutContext {
  store: McpStore;
  registration: RegisteredEvent;
  now: number;
}

/** The webhook fan-out a handler with webhooks attaches (`enqueueDeliveries`). */
export type WebhookFanout = (ctx: FanoutContext, entry: FeedEntry) => Promise<void>;

/** Options of the Events extension: the `events` handler option. */
export interface EventsOptions {
  /** Default retention of every event type's feed. @default { maxLen: 10_000, maxAgeMs: 3_600_000 } */
  retain?: EventRetention;
  /** `nextPollMs` answered to polls, in milliseconds. @default 10_000 */
  pollIntervalMs?: number;
  /** Most occurrences one poll returns (a smaller `maxEvents` returns fewer). @default 100 */
  maxEvents?: number;
  /** Interval of push streams' heartbeats, in milliseconds. @default 30_000 */
  heartbeatMs?: number;
  /** Webhook delivery (`events/subscribe`); off unless set (HTTP only). @default off */
  webhooks?: WebhookOptions | false;
}

/** A change of the registered event types: one added or removed. */
export interface EventTypesChange {
  name: string;
  removed: boolean;
}

/** The event types of a server, as the extension and its webhook module read them. */
export interface EventTypes {
  readonly events: ReadonlyMap<string, RegisteredEvent>;
  /** Listens to changes; returns the function that stops listening. */
  onChange(listener: (change: EventTypesChange) => void): () => void;
}
