import { invalidParams } from "../../../protocol/errors.js";
import { type DeliveryMode, type EventOccurrence, eventsError } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { isObject } from "../../../protocol/messages.js";
import { compareSeq, type EventFeedStore, type FeedEntry } from "../../../store/types.js";
import { canonicalJson } from "../../../utils/canonical-json.js";
import { principalKey } from "../../access.js";
import type { ExtensionRequest } from "../../extension.js";
import { positionBefore } from "./cursor.js";
import type { EventRegistry, FeedOccurrence } from "./registry.js";
import type { EventContext, RegisteredEvent } from "./types.js";

/** One poll or push subscription, checked: its event type, arguments and subscriber. */
export interface Subscription {
  event: RegisteredEvent;
  args: JsonObject;
  /** The canonical JSON of `args`, which targeted occurrences are compared with. */
  argsKey: string;
  ctx: EventContext;
  /** `maxAgeMs`, when the request bounds replay. */
  maxAgeMs: number | undefined;
}

/**
 * Checks a subscribing request (SEP-3415: the errors poll and push answer before anything
 * else): `NotFound` for an unknown event type, `Unsupported` for a mode it does not offer here,
 * `InvalidParams` for arguments its `inputSchema` rejects, `Forbidden` when `authorize` says no.
 */
export async function openSubscription(
  registry: EventRegistry,
  request: ExtensionRequest,
  mode: DeliveryMode,
  offers: (event: RegisteredEvent, mode: DeliveryMode) => boolean,
): Promise<Subscription> {
  const { params } = request;
  if (typeof params.name !== "string") throw invalidParams("name must be a string");
  const event = registry.events.get(params.name);
  if (!event) throw eventsError("NotFound", { kind: "event" }, `Unknown event: ${params.name}`);
  if (!offers(event, mode))
    throw eventsError("Unsupported", { feature: "deliveryMode", value: mode });
  const args = params.arguments ?? {};
  if (!isObject(args)) throw invalidParams("arguments must be an object");
  const checked = await event.input?.validate(args);
  if (checked && !checked.ok) throw invalidParams(`Invalid arguments: ${checked.message}`);
  const maxAgeMs = params.maxAgeMs;
  if (maxAgeMs !== undefined && !(Number.isInteger(maxAgeMs) && (maxAgeMs as number) >= 0))
    throw invalidParams("maxAgeMs must be a non-negative integer");
  const { auth } = request.env;
  const ctx: EventContext = { principal: principalKey(auth), delivery: mode };
  if (auth) ctx.auth = auth;
  const allowed = (await event.options.authorize?.(ctx, args)) ?? true;
  if (!allowed) throw eventsError("Forbidden", { reason: "Not permitted for these arguments" });
  return {
    event,
    args,
    argsKey: canonicalJson(args),
    ctx,
    maxAgeMs: maxAgeMs as number | undefined,
  };
}

/** Where delivery starts: a position in the feed, and whether events were skipped to get there. */
export interface StartPoint {
  position: string;
  truncated: boolean;
}

/**
 * Where delivery resumes from a client's cursor position (SEP-3415, Cursor Lifecycle): the
 * position itself; else, with `truncated`, the oldest retained occurrence when entries after
 * it were trimmed, the first within `maxAgeMs` when the floor passed some, or the head when the
 * position is ahead of the feed (a store that lost it).
 */
export async function startFrom(
  feeds: EventFeedStore,
  name: string,
  cursor: string,
  maxAgeMs: number | undefined,
): Promise<StartPoint> {
  const head = await feeds.head(name);
  if (compareSeq(cursor, head) > 0) return { position: head, truncated: true };
  const probe = await feeds.read(name, cursor, 1);
  const first = probe.entries[0];
  let start: StartPoint = { position: cursor, truncated: false };
  if (probe.truncated)
    start = { position: first ? positionBefore(first.seq) : probe.head, truncated: true };
  const floor = maxAgeMs === undefined ? undefined : Date.now() - maxAgeMs;
  if (floor !== undefined && first && first.at < floor) {
    const kept = await feeds.read(name, start.position, 1, floor);
    const next = kept.entries[0];
    start = { position: next ? positionBefore(next.seq) : kept.head, truncated: true };
  }
  return start;
}

/** The occurrence an entry holds, as emitted. */
export function occurrenceOf(entry: FeedEntry): EventOccurrence {
  const { eventId, name, timestamp, data } = entry.value as FeedOccurrence;
  return { eventId, name, timestamp, data };
}

/**
 * The occurrence `entry` gives a subscription, or undefined when it is not for it: targeted at
 * another principal or other arguments, or refused by the registration's `match`. Then shaped
 * by its `transform`. Throws what those hooks throw.
 */
export async function occurrenceFor(
  event: RegisteredEvent,
  subscriber: { ctx: EventContext; args: JsonObject; argsKey: string },
  entry: FeedEntry,
): Promise<EventOccurrence | undefined> {
  const value = entry.value as FeedOccurrence;
  if (value.principal !== undefined && value.principal !== subscriber.ctx.principal) return;
  if (value.arguments !== undefined && value.arguments !== subscriber.argsKey) return;
  const occurrence = occurrenceOf(entry);
  const { match, transform } = event.options;
  if (match && !(await match(subscriber.ctx, occurrence, subscriber.args))) return;
  return transform ? transform(subscriber.ctx, occurrence, subscriber.args) : occurrence;
}

/** Entries a read asks the store for at once. */
const CHUNK = 256;
/** Reads one poll makes at most, however few of the entries are for its subscription. */
const MAX_READS = 8;

/** What a poll found: its events, the position after them, and what it could not include. */
export interface Scan {
  events: EventOccurrence[];
  position: string;
  truncated: boolean;
  hasMore: boolean;
}

/**
 * Reads the feed after `from` for one subscription, up to `maxEvents` of its occurrences: the
 * position ends after the last entry examined, so what was not for it is never read again. A
 * hook that throws skips its occurrence (reported), rather than failing every later poll.
 */
export async function scan(
  feeds: EventFeedStore,
  subscription: Subscription,
  from: string,
  maxEvents: number,
  onError: (error: unknown) => void,
): Promise<Scan> {
  const name = subscription.event.descriptor.name;
  const found: Scan = { events: [], position: from, truncated: false, hasMore: true };
  for (let reads = 0; reads < MAX_READS; reads++) {
    const read = await feeds.read(name, found.position, CHUNK);
    // Trimmed while this poll read: a gap after all.
    if (read.truncated) found.truncated = true;
    for (const entry of read.entries) {
      if (found.events.length >= maxEvents) return found;
      found.position = entry.seq;
      try {
        const occurrence = await occurrenceFor(subscription.event, subscription, entry);
        if (occurrence) found.events.push(occurrence);
      } catch (error) {
        onError(error);
      }
    }
    if (read.entries.length < CHUNK) {
      if (compareSeq(read.head, found.position) > 0) found.position = read.head;
      found.hasMore = false;
      return found;
    }
  }
  return found;
}
