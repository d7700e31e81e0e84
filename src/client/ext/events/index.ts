import {
  type EventDescriptor,
  EVENTS_EXTENSION,
  EventsMethod,
  eventsError,
  type PollEventsResult,
} from "../../../protocol/events.js";
import { isObject, type JsonObject } from "../../../protocol/messages.js";
import type { ClientExtension } from "../../extension.js";
import type { Era, RequestOptions } from "../../types.js";
import { pollSubscription } from "./poll-loop.js";
import { pushSubscription } from "./push-stream.js";
import { asPollResult, descriptorsOf } from "./results.js";
import type {
  EventStreamOptions,
  EventsHost,
  PollEventsOptions,
  EventSubscription,
  SubscribeEventsOptions,
  WebhookSubscription,
} from "./types.js";
import { WebhookHandle } from "./webhook.js";

export type * from "./types.js";

/** Pages followed at most, against a server whose cursors never end. */
const MAX_PAGES = 100;

/**
 * The events extension's client side (SEP-3415): declared, with empty settings, on the
 * `events/*` requests of the modern era (a legacy session has no per-request capabilities).
 */
export class EventsExtension implements ClientExtension {
  readonly id = EVENTS_EXTENSION;

  declaredOn(method: string, era: Era): JsonObject | undefined {
    return era === "modern" && method.startsWith("events/") ? {} : undefined;
  }

  follow(): undefined {
    return undefined;
  }
}

/** True when the server declares Events (SEP-3415: no `events/*` request to one that does not). */
export function offersEvents(host: Pick<EventsHost, "server">): boolean {
  const extensions = host.server.capabilities.extensions;
  return isObject(extensions) && isObject(extensions[EVENTS_EXTENSION]);
}

function requireEvents(host: EventsHost): void {
  if (!offersEvents(host)) throw new Error("The server does not offer Events (SEP-3415)");
}

/** Every page of `events/list`; none when the server does not declare the extension. */
export async function listEvents(
  host: EventsHost,
  options: RequestOptions,
): Promise<EventDescriptor[]> {
  if (!offersEvents(host)) return [];
  const events: EventDescriptor[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await host.request(EventsMethod.list, cursor ? { cursor } : {}, options);
    events.push(...descriptorsOf(page));
    cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
    if (!cursor || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return events;
}

/** One `events/poll`, its result checked. */
export async function pollEvents(
  host: EventsHost,
  name: string,
  args: JsonObject,
  options: PollEventsOptions,
): Promise<PollEventsResult> {
  requireEvents(host);
  const { cursor = null, maxAgeMs, maxEvents, ...request } = options;
  const params: JsonObject = { name, arguments: args, cursor };
  if (maxAgeMs !== undefined) params.maxAgeMs = maxAgeMs;
  if (maxEvents !== undefined) params.maxEvents = maxEvents;
  return asPollResult(await host.request(EventsMethod.poll, params, request));
}

/**
 * A subscription, once live: a webhook once subscribed, a stream once `active`, a poll loop
 * once its first poll answered; the error of a refused subscription (NotFound, Forbidden,
 * Unsupported) is thrown here. Without `delivery`, push when the event type offers it, else poll.
 */
export async function subscribeEvents(
  host: EventsHost,
  name: string,
  args: JsonObject,
  options: SubscribeEventsOptions,
): Promise<EventSubscription | WebhookSubscription> {
  requireEvents(host);
  if (options.delivery === "webhook") {
    const handle = new WebhookHandle(host, name, args, options);
    await handle.subscribed;
    return handle;
  }
  const streamOptions: EventStreamOptions = options;
  const delivery = streamOptions.delivery ?? (await defaultDelivery(host, name));
  const subscribe = delivery === "push" ? pushSubscription : pollSubscription;
  const subscription = subscribe(host, name, args, streamOptions);
  try {
    await subscription.active;
  } catch (error) {
    subscription.close();
    throw error;
  }
  return subscription;
}

/** Push when the event type offers it, else poll (SEP-3415, delivery mode selection). */
async function defaultDelivery(host: EventsHost, name: string): Promise<"poll" | "push"> {
  const descriptor = (await listEvents(host, {})).find((event) => event.name === name);
  if (!descriptor) throw eventsError("NotFound", { kind: "event" }, `No event type ${name}`);
  if (descriptor.delivery.includes("push")) return "push";
  if (descriptor.delivery.includes("poll")) return "poll";
  throw eventsError(
    "Unsupported",
    { feature: "deliveryMode", value: descriptor.delivery },
    `${name} is delivered by webhook only: subscribe with delivery "webhook" and a receiver`,
  );
}
