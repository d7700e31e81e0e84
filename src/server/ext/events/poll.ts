import { invalidParams } from "../../../protocol/errors.js";
import type { DeliveryMode } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { EventFeedStore } from "../../../store/types.js";
import type { ExtensionRequest } from "../../extension.js";
import { paginate } from "../../pagination.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { openSubscription, scan, startFrom } from "./reader.js";
import type { EventRegistry } from "./registry.js";
import type { RegisteredEvent } from "./types.js";

/** What the poll and list methods of one handler share. */
export interface EventsMethodsContext {
  registry: EventRegistry;
  feeds: EventFeedStore;
  /** Whether this handler serves `mode` for `event` (webhook needs `events.webhooks`). */
  offers(event: RegisteredEvent, mode: DeliveryMode): boolean;
  pollIntervalMs: number;
  maxEvents: number;
  onError(error: unknown): void;
}

/** `events/list`: the event types, paginated as `tools/list`, each with the modes served here. */
export async function listEvents(
  context: EventsMethodsContext,
  { server, params }: ExtensionRequest,
): Promise<JsonObject> {
  const listed: JsonObject[] = [];
  for (const event of context.registry.events.values()) {
    const delivery = event.descriptor.delivery.filter((mode) => context.offers(event, mode));
    if (delivery.length > 0) listed.push({ ...event.descriptor, delivery });
  }
  const page = paginate(listed, params.cursor, server.pageSize);
  const result: JsonObject = { events: page.items };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return result;
}

/**
 * `events/poll` (SEP-3415, Poll-Based Delivery): a null cursor answers the head and no events;
 * otherwise the subscription's occurrences after the cursor, at most `maxEvents`, with the
 * position after the last entry examined, `hasMore` when more are waiting, and `truncated`
 * when some were trimmed or fell before `maxAgeMs`. Nothing is kept between polls.
 */
export async function pollEvents(
  context: EventsMethodsContext,
  request: ExtensionRequest,
): Promise<JsonObject> {
  const subscription = await openSubscription(context.registry, request, "poll", context.offers);
  const name = subscription.event.descriptor.name;
  const maxEvents = request.params.maxEvents;
  if (maxEvents !== undefined && !(Number.isInteger(maxEvents) && (maxEvents as number) >= 1))
    throw invalidParams("maxEvents must be a positive integer");
  const cap = Math.min((maxEvents as number | undefined) ?? context.maxEvents, context.maxEvents);
  const cursor = decodeCursor(name, request.params.cursor);
  const result: JsonObject = {
    events: [],
    cursor: null,
    truncated: false,
    hasMore: false,
    nextPollMs: context.pollIntervalMs,
  };
  if (cursor === null) {
    result.cursor = encodeCursor(name, await context.feeds.head(name));
    return result;
  }
  const start = await startFrom(context.feeds, name, cursor, subscription.maxAgeMs);
  const found = await scan(context.feeds, subscription, start.position, cap, context.onError);
  result.events = found.events;
  result.cursor = encodeCursor(name, found.position);
  result.truncated = start.truncated || found.truncated;
  result.hasMore = found.hasMore;
  return result;
}
