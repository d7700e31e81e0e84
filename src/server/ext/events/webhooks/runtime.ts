import type {
  DeliveryQueue,
  EventFeedStore,
  WebhookRecord,
  WebhookStore,
} from "../../../../store/types.js";
import type { WebhookHost } from "../webhook-module.js";
import type { ResolvedWebhookOptions } from "./options.js";
import type { SendOptions } from "./send.js";
import type { VerifiedEndpoints } from "./verify.js";

/** What the webhook methods, the fan-out and the worker of one handler share. */
export interface WebhookRuntime {
  host: WebhookHost;
  options: ResolvedWebhookOptions;
  feeds: EventFeedStore;
  webhooks: WebhookStore;
  deliveries: DeliveryQueue;
  /** The sender's settings, once the address policy is built (ipaddr.js loaded). */
  send(): Promise<SendOptions>;
  verified: VerifiedEndpoints;
  /** Wakes the delivery workers of every process: jobs were enqueued or became due. */
  wake(): void;
}

/** Writes attempted before a change to a subscription gives up on concurrent writers. */
const ATTEMPTS = 8;

/**
 * Applies `change` to the stored subscription with optimistic concurrency, re-reading after a
 * concurrent write; `change` returns undefined to leave it. Resolves to the record written, or
 * undefined when the subscription is gone or left as it was.
 */
export async function updateRecord(
  webhooks: WebhookStore,
  name: string,
  id: string,
  change: (record: WebhookRecord) => WebhookRecord | undefined,
): Promise<WebhookRecord | undefined> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await webhooks.get(name, id);
    if (!current) return undefined;
    const next = change(structuredClone(current));
    if (!next) return undefined;
    next.version = current.version + 1;
    if (await webhooks.put(next, current.version)) return next;
  }
  throw new Error(`Subscription ${id} kept changing under this write`);
}
