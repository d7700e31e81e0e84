import type {
  DeliveryStatus,
  EventOccurrence,
  EventsErrorObject,
  SubscribeEventsResult,
} from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { Era, Notification, ReconnectOptions, RequestOptions } from "../../types.js";
import type { WebhookSecretRegistry } from "./webhook-secrets.js";

/** What the events helpers need of the client: its requests, era and the server's description. */
export interface EventsHost {
  readonly era: Era;
  readonly server: { capabilities: JsonObject };
  /** `stdio` and `sse` cancel a stream with `notifications/cancelled`; `http` closes it. */
  readonly wireKind: "http" | "stdio" | "sse";
  request(
    method: string,
    params: JsonObject,
    options: RequestOptions & { onNotification?: (notification: Notification) => void },
  ): Promise<JsonObject>;
}

/** Options of `McpClient.pollEvents`: one `events/poll`. */
export interface PollEventsOptions extends RequestOptions {
  /** Where to read from: the last poll's cursor; null (the default) starts from now. */
  cursor?: string | null;
  /** Replay nothing older than this many milliseconds. */
  maxAgeMs?: number;
  /** Most events in one answer. */
  maxEvents?: number;
}

/** What every subscription takes, whatever its delivery. */
interface SubscribeCommon {
  /** The cursor persisted last time, to resume from; null (the default) starts from now. */
  cursor?: string | null;
  /** Replay nothing older than this many milliseconds (SEP-3415, bounding replay). */
  maxAgeMs?: number;
  /** Ends the subscription: stops polling, closes the stream, unsubscribes the webhook. */
  signal?: AbortSignal;
  /** Called with every cursor the subscription reaches: persist it to resume after a restart. */
  onCursor?: (cursor: string | null) => void;
}

/** Options of a poll or push subscription (`McpClient.subscribeEvents`). */
export interface EventStreamOptions extends SubscribeCommon {
  /**
   * `push` holds an `events/stream`, `poll` loops on `events/poll`. @default "push" when the
   * event type offers it, else "poll"
   */
  delivery?: "poll" | "push";
  /** Most events per poll. */
  maxEvents?: number;
  /** The shortest wait between polls, whatever `nextPollMs` says. @default 1000 */
  minPollMs?: number;
  /**
   * Milliseconds a push stream may stay silent (no event, no heartbeat) before it counts as
   * dead and is opened again from the cursor: twice the 30 s heartbeat the text asks for,
   * and some slack. @default 70000
   */
  heartbeatTimeoutMs?: number;
  /** How a failed poll or a dropped stream is retried, or `false` to end the iteration. @default {} */
  reconnect?: ReconnectOptions | false;
  /** Called when events were skipped (`truncated`): fetch authoritative state if it matters. */
  onTruncated?: (cursor: string | null) => void;
  /** Called with a push stream's `notifications/events/error`: one failure, the stream goes on. */
  onError?: (error: EventsErrorObject) => void;
}

/** Where a webhook subscription delivers, and the secret it signs with. */
export interface WebhookTarget {
  /** The receiver's `https` URL. */
  url: string;
  /** A `whsec_` secret; one is generated from a CSPRNG when none is given. */
  secret?: string;
  /**
   * Told the secret before `events/subscribe` (`add`: the verification challenge arrives during
   * it) and the subscription id after (`bind`): a {@link WebhookSecrets} shared with the receiver.
   */
  secrets?: WebhookSecretRegistry;
}

/** Options of a webhook subscription (`McpClient.subscribeEvents` with `delivery: "webhook"`). */
export interface WebhookSubscribeOptions extends SubscribeCommon {
  delivery: "webhook";
  webhook: WebhookTarget;
  /** The lifetime asked for; null asks for no expiry. @default the server's default */
  ttlMs?: number | null;
  /** How often a subscription granted no expiry is refreshed anyway. @default 3600000 */
  healthCheckMs?: number;
}

/** An open poll or push subscription: iterate it for occurrences, each `eventId` once. */
export interface EventSubscription extends AsyncIterableIterator<EventOccurrence> {
  readonly delivery: "poll" | "push";
  /** The latest cursor reached: what to persist, and pass back as `cursor` to resume. */
  readonly cursor: string | null;
  /** Resolves once the subscription is live (the first poll, the stream's `active`). */
  readonly active: Promise<void>;
  close(): void;
}

/** One `events/subscribe` answer of a webhook subscription: its grant, cursor and health. */
export interface WebhookStatus {
  id: string;
  refreshBefore: string | null;
  cursor: string | null;
  truncated: boolean;
  deliveryStatus?: DeliveryStatus;
}

/**
 * An open webhook subscription: the events go to the receiver; iterate it for the status each
 * subscribe and refresh returns. `close()` (or the signal) unsubscribes.
 */
export interface WebhookSubscription extends AsyncIterableIterator<WebhookStatus> {
  readonly delivery: "webhook";
  /** The `whsec_` secret deliveries are signed with (given or generated). */
  readonly secret: string;
  /** The latest cursor: from the last refresh, or from {@link WebhookSubscription.advance}. */
  readonly cursor: string | null;
  /** The first `events/subscribe` answer; rejects if subscribing failed. */
  readonly subscribed: Promise<WebhookStatus>;
  /** Records a cursor the receiver got with a delivery, so the next refresh passes it. */
  advance(cursor: string | null): void;
  /**
   * Rotates the secret: a new one (generated unless given) bound to the id at
   * `webhook.secrets` beside the old, then sent by a refresh now; the server signs with both
   * for a grace window, after which the receiver may forget the old one.
   */
  rotateSecret(secret?: string): Promise<WebhookStatus>;
  /** Stops refreshing and sends `events/unsubscribe`. */
  close(): Promise<void>;
}

/** Options of `McpClient.subscribeEvents`. */
export type SubscribeEventsOptions = EventStreamOptions | WebhookSubscribeOptions;

/** The status a result of `events/subscribe` gives. */
export function statusOf(result: SubscribeEventsResult): WebhookStatus {
  const status: WebhookStatus = {
    id: result.id,
    refreshBefore: result.refreshBefore ?? null,
    cursor: result.cursor ?? null,
    truncated: result.truncated === true,
  };
  if (result.deliveryStatus) status.deliveryStatus = result.deliveryStatus;
  return status;
}
