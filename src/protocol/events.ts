import { McpError } from "./errors.js";
import type { JsonObject, RequestId } from "./messages.js";

/** The Events extension's identifier, negotiated in `capabilities.extensions` (SEP-3415). */
export const EVENTS_EXTENSION = "io.modelcontextprotocol/events";

/** The extension's requests, by name (SEP-3415: the `events/` prefix is reserved for it). */
export const EventsMethod = {
  list: "events/list",
  poll: "events/poll",
  stream: "events/stream",
  subscribe: "events/subscribe",
  unsubscribe: "events/unsubscribe",
} as const;

/** The extension's notifications, by name (the `notifications/events/` prefix). */
export const EventsNotification = {
  listChanged: "notifications/events/list_changed",
  active: "notifications/events/active",
  event: "notifications/events/event",
  heartbeat: "notifications/events/heartbeat",
  error: "notifications/events/error",
  terminated: "notifications/events/terminated",
} as const;

/** Where every push notification carries its `events/stream` request's id (SEP-3415, push). */
export const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";

/** The header that carries a webhook subscription's id on every delivery. */
export const SUBSCRIPTION_ID_HEADER = "X-MCP-Subscription-Id";

/**
 * The extension's error codes (SEP-3415, Error Handling): the standard InvalidParams and five
 * general-purpose codes, provisional in the text until it is accepted.
 */
export const EventsErrorCode = {
  InvalidParams: -32602,
  NotFound: -32023,
  Forbidden: -32024,
  ResourceExhausted: -32025,
  Unsupported: -32026,
  CallbackEndpointError: -32027,
} as const;

/** The name of an error the extension defines. */
export type EventsErrorName = keyof typeof EventsErrorCode;

/** A delivery mode an event type offers. */
export type DeliveryMode = "poll" | "push" | "webhook";

/** The `lastError` categories, also `data.reason` of a `CallbackEndpointError`. */
export type DeliveryErrorCategory =
  | "connection_refused"
  | "timeout"
  | "tls_error"
  | "http_4xx"
  | "http_5xx"
  | "challenge_failed";

/** What each error's `data` holds, as the text gives it. */
export interface EventsErrorData {
  InvalidParams: JsonObject | undefined;
  NotFound: { kind?: "event" | "subscription"; [key: string]: unknown } | undefined;
  Forbidden: { reason?: string; [key: string]: unknown } | undefined;
  ResourceExhausted: { limit: string; max?: number; [key: string]: unknown };
  Unsupported: { feature: string; value?: unknown; reason?: string; [key: string]: unknown };
  CallbackEndpointError: { reason: DeliveryErrorCategory; [key: string]: unknown };
}

/**
 * The error named `name`, its message the name itself (as the text's examples write it) unless
 * one is given.
 *
 * @example
 * ```ts
 * import { eventsError } from "mcp-mount";
 *
 * throw eventsError("NotFound", { kind: "event" });
 * ```
 */
export function eventsError<Name extends EventsErrorName>(
  name: Name,
  data: EventsErrorData[Name],
  message: string = name,
): McpError {
  return new McpError(EventsErrorCode[name], message, data);
}

/** The name of an extension error code, or undefined for another code. */
export function eventsErrorName(code: number): EventsErrorName | undefined {
  const names = Object.keys(EventsErrorCode) as EventsErrorName[];
  return names.find((name) => EventsErrorCode[name] === code);
}

/** The server's settings under `capabilities.extensions[EVENTS_EXTENSION]`. */
export interface EventsCapability {
  /** Whether the server sends `notifications/events/list_changed`. @default false */
  listChanged?: boolean;
}

/** One entry of `events/list`. */
export interface EventDescriptor {
  name: string;
  description?: string;
  /** A non-empty subset of the modes. */
  delivery: DeliveryMode[];
  /** JSON Schema of the subscription arguments. */
  inputSchema: JsonObject;
  /** JSON Schema of `data` in the occurrences. */
  payloadSchema?: JsonObject;
  _meta?: JsonObject;
}

/** The `events/list` result. */
export interface ListEventsResult {
  events: EventDescriptor[];
  nextCursor?: string;
  resultType?: "complete";
  _meta?: JsonObject;
}

/** An occurrence: a poll result's entry, a push event's params, a webhook delivery's body. */
export interface EventOccurrence {
  /** Stable, for deduplication. */
  eventId: string;
  name: string;
  /** ISO 8601. */
  timestamp: string;
  data: JsonObject;
  /** The subscription's position after it (push and webhook); null without replay. */
  cursor?: string | null;
  _meta?: JsonObject;
}

/** What every subscribing request names: an event type, arguments, and where to start. */
export interface SubscriptionParams {
  name: string;
  arguments?: JsonObject;
  /** Absent or null: start from now. */
  cursor?: string | null;
  /** Replay nothing older than this many milliseconds. */
  maxAgeMs?: number;
  _meta?: JsonObject;
}

/** `events/poll` params. */
export interface PollEventsParams extends SubscriptionParams {
  /** Most events to return. */
  maxEvents?: number;
}

/** `events/poll` result. */
export interface PollEventsResult {
  events: EventOccurrence[];
  cursor: string | null;
  truncated: boolean;
  hasMore: boolean;
  nextPollMs: number;
  resultType?: "complete";
  _meta?: JsonObject;
}

/** `events/stream` params. */
export type StreamEventsParams = SubscriptionParams;

/** The `_meta` every push notification carries. */
export interface SubscriptionMeta {
  [SUBSCRIPTION_ID_META]: RequestId;
  [key: string]: unknown;
}

/** `notifications/events/active` params: the stream is live from `cursor`. */
export interface EventsActiveParams {
  cursor: string | null;
  truncated: boolean;
  _meta: SubscriptionMeta;
}

/** `notifications/events/event` params. */
export type EventsEventParams = EventOccurrence & { _meta: SubscriptionMeta };

/** `notifications/events/heartbeat` params: the position checked up to. */
export interface EventsHeartbeatParams {
  cursor: string | null;
  _meta: SubscriptionMeta;
}

/** A JSON-RPC error object, as `error` and `terminated` carry it. */
export interface EventsErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** `notifications/events/error` and `notifications/events/terminated` params. */
export interface EventsErrorParams {
  error: EventsErrorObject;
  _meta: SubscriptionMeta;
}

/** The result that ends a stream the server closed: nothing but `_meta`. */
export interface StreamEventsResult {
  resultType?: "complete";
  _meta: SubscriptionMeta;
}

/** Where a webhook subscription delivers. */
export interface WebhookDelivery {
  mode?: "webhook";
  /** `https` only. */
  url: string;
  /** `whsec_` and the base64 of 24 to 64 random bytes. */
  secret: string;
}

/** `events/subscribe` params. */
export interface SubscribeEventsParams extends SubscriptionParams {
  delivery: WebhookDelivery;
  /** Suggested lifetime; absent for the server's default, null to ask for no expiry. */
  ttlMs?: number | null;
}

/** How deliveries to a webhook are going, on a refresh. */
export interface DeliveryStatus {
  active: boolean;
  lastDeliveryAt?: string | null;
  lastError?: DeliveryErrorCategory | null;
  failedSince?: string | null;
  throttled?: boolean;
  retryAfterMs?: number;
}

/** `events/subscribe` result. */
export interface SubscribeEventsResult {
  /** Derived from (principal, url, name, arguments). */
  id: string;
  /** ISO 8601; null for no expiry. */
  refreshBefore: string | null;
  cursor: string | null;
  truncated: boolean;
  deliveryStatus?: DeliveryStatus;
  resultType?: "complete";
  _meta?: JsonObject;
}

/** `events/unsubscribe` params. */
export interface UnsubscribeEventsParams {
  name: string;
  arguments?: JsonObject;
  delivery: { url: string };
  _meta?: JsonObject;
}

/** A webhook body that is not an occurrence: it has a `type`. */
export type WebhookControlEnvelope =
  | { type: "gap"; cursor: string | null }
  | { type: "terminated"; error: EventsErrorObject }
  | { type: "verification"; challenge: string };

/** Any webhook body: an occurrence, or a control envelope. */
export type WebhookBody = EventOccurrence | WebhookControlEnvelope;

/** True for a control envelope (a body with a top-level `type`). */
export function isControlEnvelope(body: WebhookBody): body is WebhookControlEnvelope {
  return typeof (body as { type?: unknown }).type === "string";
}

/** The `webhook-id` of a control envelope: `msg_<type>_<random>`. */
export function controlWebhookId(type: WebhookControlEnvelope["type"]): string {
  return `msg_${type}_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The `subscriptions/listen` filter flag that asks for `notifications/events/list_changed`. */
export const EVENTS_LIST_CHANGED_FLAG = "eventsListChanged";
