import type { EventOccurrence } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { readBody, TooLarge } from "./read-body.js";
import {
  type Envelope,
  type GapEnvelope,
  parseDelivery,
  type TerminatedEnvelope,
} from "./webhook-body.js";

export type { EventOccurrence, EventsErrorObject } from "../../../protocol/events.js";
export type { GapEnvelope, TerminatedEnvelope } from "./webhook-body.js";
export {
  generateWebhookSecret,
  type WebhookSecretRegistry,
  WebhookSecrets,
} from "./webhook-secrets.js";

/** One secret, several (a rotation), or none (an id the receiver does not know yet). */
export type Secrets = string | readonly string[] | undefined;

/** Where a receiver finds the secrets it verifies with (a {@link WebhookSecrets} is one). */
export interface SecretSource {
  /** The secrets deliveries to `subscriptionId` verify with; none for an id not known yet. */
  lookup(subscriptionId: string): Secrets | Promise<Secrets>;
  /** Secrets awaiting an id: tried on a verification challenge for an id `lookup` does not know. */
  pending?(): Secrets | Promise<Secrets>;
  /** Told which secret answered a challenge for `subscriptionId`, to route its deliveries. */
  bind?(subscriptionId: string, secret: string): void | Promise<void>;
}

/** What the app learns with each delivery. */
export interface DeliveryContext {
  /** The `X-MCP-Subscription-Id` the delivery names (verified by its signature). */
  subscriptionId: string;
  /** The Standard Webhooks `webhook-id`: the `eventId` of an event. */
  webhookId: string;
}

/** Options of {@link createEventsReceiver}. */
export interface EventsReceiverOptions {
  /** The secrets by subscription id, as a function or a {@link SecretSource}. */
  secrets: SecretSource | ((subscriptionId: string) => Secrets | Promise<Secrets>);
  /**
   * Takes one verified occurrence. Return once it is kept (persisted or queued): the receiver
   * then answers 204; a throw answers 500 so the server delivers it again (SEP-3415:
   * acknowledgement semantics). Persist `event.cursor` too, to resume from it.
   */
  onEvent(event: EventOccurrence, context: DeliveryContext): void | Promise<void>;
  /** Takes a verified `gap` (persist its cursor; events were skipped) or `terminated` envelope. */
  onControl?(envelope: GapEnvelope | TerminatedEnvelope, context: DeliveryContext): unknown;
  /** Seconds a `webhook-timestamp` may be old, at most 300 (SEP-3415's window). @default 300 */
  toleranceSeconds?: number;
  /** Largest body read, in bytes; larger ones are answered 413. @default 262144 (256 KiB) */
  maxBodyBytes?: number;
  /** Deliveries remembered to drop a repeat (by subscription id and `webhook-id`). @default 10000 */
  dedupeSize?: number;
}

/** A Web-standard handler: a Next.js route handler, a fetch host's handler. */
export type EventsReceiver = (request: Request) => Promise<Response>;

const TOLERANCE_SECONDS = 300;
const SUBSCRIPTION_HEADER = "x-mcp-subscription-id";

/**
 * The webhook endpoint of Events (SEP-3415) as a Web `Request -> Response` handler: selects the
 * secret by `X-MCP-Subscription-Id`, verifies the Standard Webhooks signature over the raw body
 * (the `standardwebhooks` peer), refuses stale timestamps, drops repeats, answers a
 * `verification` challenge, and hands typed occurrences and envelopes to the app.
 *
 * @example
 * ```ts
 * // app/hooks/mcp/route.ts (Next.js)
 * import { createEventsReceiver, WebhookSecrets } from "mcp-mount/events/receiver";
 *
 * export const secrets = new WebhookSecrets();
 * export const POST = createEventsReceiver({
 *   secrets,
 *   onEvent: async (event, { subscriptionId }) => {
 *     console.log(subscriptionId, event.name, event.eventId);
 *   },
 * });
 * ```
 */
export function createEventsReceiver(options: EventsReceiverOptions): EventsReceiver {
  const tolerance = options.toleranceSeconds ?? TOLERANCE_SECONDS;
  if (!(tolerance > 0 && tolerance <= TOLERANCE_SECONDS)) {
    throw new RangeError("toleranceSeconds must be more than 0 and at most 300");
  }
  const source = toSource(options.secrets);
  const seen = new RecentIds(options.dedupeSize ?? 10_000);
  const maxBytes = options.maxBodyBytes ?? 256 * 1024;
  return async (request) => {
    if (request.method !== "POST") return answer(405, "Deliveries are POSTed", { allow: "POST" });
    const headers = deliveryHeaders(request.headers);
    if (!headers)
      return answer(
        400,
        "Missing webhook-id, webhook-timestamp, webhook-signature or X-MCP-Subscription-Id",
      );
    let body: Uint8Array;
    try {
      body = await readBody(request, maxBytes);
    } catch (error) {
      if (error instanceof TooLarge) return answer(413, `Bodies are at most ${maxBytes} bytes`);
      throw error;
    }
    const stale = staleness(headers.timestamp, tolerance);
    if (stale) return answer(401, stale);
    const { subscriptionId, webhookId } = headers;
    const context: DeliveryContext = { subscriptionId, webhookId };
    const verified = await verify(source, subscriptionId, body, headers.standard);
    if (verified.outcome !== "verified") return refusal(verified.outcome);
    const delivery = parseDelivery(body);
    if (!delivery) return answer(400, "The body is no EventOccurrence or control envelope");
    if (delivery.type === "verification") {
      await source.bind?.(subscriptionId, verified.secret);
      return Response.json({ challenge: delivery.challenge });
    }
    const key = `${subscriptionId}\n${webhookId}`;
    if (seen.has(key)) return new Response(null, { status: 204 });
    try {
      await handOn(delivery, context, options);
    } catch {
      // Retryable, and nothing of the app's error goes back to the sender.
      return answer(500, "The delivery could not be taken now");
    }
    seen.add(key);
    return new Response(null, { status: 204 });
  };
}

/** A verification's outcome: which secret verified, or why none did. */
type Verification =
  | { outcome: "verified"; secret: string }
  | { outcome: "unknown" | "unsigned" | "unavailable" };

/** Hands a verified occurrence or envelope to the app; unknown control types are ignored. */
async function handOn(
  delivery: Exclude<Envelope, { type: "verification" }>,
  context: DeliveryContext,
  options: EventsReceiverOptions,
): Promise<void> {
  if (delivery.type === "event") await options.onEvent(delivery.event, context);
  else if (delivery.type === "gap" || delivery.type === "terminated")
    await options.onControl?.(delivery, context);
}

/**
 * Tries the secrets bound to the id, then (for a challenge to an id not bound yet) the pending
 * ones: the first that verifies the raw body wins.
 */
async function verify(
  source: SecretSource,
  subscriptionId: string,
  body: Uint8Array,
  headers: Record<string, string>,
): Promise<Verification> {
  const bound = listOf(await source.lookup(subscriptionId));
  const pending = bound.length === 0 && isChallenge(body) ? listOf(await source.pending?.()) : [];
  const candidates = [...bound, ...pending];
  if (candidates.length === 0) return { outcome: "unknown" };
  const Webhook = await loadWebhook();
  if (!Webhook) return { outcome: "unavailable" };
  for (const secret of candidates) {
    try {
      new Webhook(secret).verify(body, headers, { jsonParse: false });
      return { outcome: "verified", secret };
    } catch {
      // The next secret: a rotation keeps two.
    }
  }
  return { outcome: "unsigned" };
}

function refusal(outcome: "unknown" | "unsigned" | "unavailable"): Response {
  // Not routed yet: the server retries (SEP-3415, subscribe and delivery race).
  if (outcome === "unknown") return answer(503, "Unknown subscription id", { "retry-after": "5" });
  if (outcome === "unavailable")
    return answer(500, "The standardwebhooks package is not installed");
  return answer(401, "No signature verifies");
}

/** True when the body parses as a `verification` envelope (read only to pick secrets). */
function isChallenge(body: Uint8Array): boolean {
  return parseDelivery(body)?.type === "verification";
}

function listOf(secrets: Secrets): string[] {
  if (secrets === undefined) return [];
  return typeof secrets === "string" ? [secrets] : [...secrets];
}

function toSource(secrets: EventsReceiverOptions["secrets"]): SecretSource {
  return typeof secrets === "function" ? { lookup: secrets } : secrets;
}

/** The Standard Webhooks headers and the subscription id of a delivery. */
interface DeliveryHeaders {
  /** `webhook-id`, `webhook-timestamp` and `webhook-signature`, as the verifier takes them. */
  standard: Record<string, string>;
  webhookId: string;
  timestamp: string;
  subscriptionId: string;
}

/** The four headers every delivery carries (SEP-3415, delivery profile); undefined if one lacks. */
function deliveryHeaders(headers: Headers): DeliveryHeaders | undefined {
  const webhookId = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signature = headers.get("webhook-signature");
  const subscriptionId = headers.get(SUBSCRIPTION_HEADER);
  if (!webhookId || !timestamp || !signature || !subscriptionId) return undefined;
  const standard = {
    "webhook-id": webhookId,
    "webhook-timestamp": timestamp,
    "webhook-signature": signature,
  };
  return { standard, webhookId, timestamp, subscriptionId };
}

/** Why a `webhook-timestamp` is refused (too old or too far ahead), or undefined. */
function staleness(timestamp: string, toleranceSeconds: number): string | undefined {
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds)) return "webhook-timestamp is no Unix time in seconds";
  const skew = Date.now() / 1000 - seconds;
  if (skew > toleranceSeconds) return "webhook-timestamp is too old";
  if (skew < -toleranceSeconds) return "webhook-timestamp is in the future";
  return undefined;
}

function answer(status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error: message }, { status, headers });
}

type WebhookClass = typeof import("standardwebhooks").Webhook;
let webhookClass: Promise<WebhookClass | undefined> | undefined;

/** The `standardwebhooks` peer, loaded on first use; undefined when it is not installed. */
function loadWebhook(): Promise<WebhookClass | undefined> {
  webhookClass ??= import("standardwebhooks").then(
    (module) => module.Webhook ?? (module as { default?: JsonObject }).default?.Webhook,
    () => undefined,
  ) as Promise<WebhookClass | undefined>;
  return webhookClass;
}

/** The last `size` keys seen, oldest dropped first. */
class RecentIds {
  readonly #keys = new Set<string>();
  readonly #size: number;

  constructor(size: number) {
    this.#size = size;
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  add(key: string): void {
    this.#keys.add(key);
    if (this.#keys.size > this.#size) this.#keys.delete(this.#keys.values().next().value!);
  }
}
