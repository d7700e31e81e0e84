import { compareSeq, type DeliveryJob, type WebhookRecord } from "../../../../store/types.js";
import { isFailing, watermark } from "./record.js";
import { type WebhookRuntime, updateRecord } from "./runtime.js";
import type { FailureReason } from "./send.js";

/** How an attempt went. */
export type Outcome =
  | { kind: "delivered" }
  | { kind: "failed"; reason: FailureReason; status?: number | undefined };

/** Successes closer together than this write `lastDeliveryAt` once (one write, not one each). */
const DELIVERED_WRITE_MS = 1_000;

/**
 * Settles an attempt in the queue and on the subscription (SEP-3415, webhook event delivery):
 * 2xx completes the job and clears the failure; 410 (the receiver declines it) and 413 (too
 * large) are final for that event and never retried, without affecting the subscription;
 * any other failure is retried after the next delay of `retryDelaysMs`, then abandoned. An
 * abandonment after the subscription has failed for `suspendAfterMs` suspends it until a
 * refresh, freezing `from` at its watermark then: nothing is queued for it while suspended, and
 * the refresh that reactivates it replays the feed from there. (The cursors sent meanwhile stay
 * before every job still queued: see `watermark`.)
 */
export async function recordOutcome(
  runtime: WebhookRuntime,
  job: DeliveryJob,
  record: WebhookRecord,
  outcome: Outcome,
): Promise<void> {
  const { deliveries, webhooks, options } = runtime;
  const now = Date.now();
  if (outcome.kind === "delivered") {
    await deliveries.complete(job.id, job.claim);
    const recent = now - (record.lastDeliveryAt ?? 0) < DELIVERED_WRITE_MS;
    if (recent && !isFailing(record) && record.lastError === undefined) return;
    await updateRecord(webhooks, record.name, record.id, (current) => {
      current.lastDeliveryAt = now;
      delete current.failedSince;
      delete current.lastError;
      return current;
    });
    return;
  }
  if (outcome.status === 410 || outcome.status === 413)
    return deliveries.complete(job.id, job.claim);
  const attempt = job.attempt + 1;
  const delay = options.retryDelaysMs[attempt - 1];
  if (delay === undefined) await deliveries.complete(job.id, job.claim);
  else await deliveries.retry({ ...job, attempt }, now + jittered(delay));
  // Where a suspension would freeze it: before what is still owed, else the feed's head.
  const held =
    delay === undefined
      ? await watermark(deliveries, record, await runtime.feeds.head(record.name))
      : undefined;
  await updateRecord(webhooks, record.name, record.id, (current) => {
    current.failedSince ??= now;
    current.lastError = outcome.reason;
    if (
      held !== undefined &&
      current.active &&
      now - current.failedSince >= options.suspendAfterMs
    ) {
      current.active = false;
      if (compareSeq(held, current.from) > 0) current.from = held;
    }
    return current;
  });
}

/** A delay stretched by up to a fifth at random, so that retries of one outage spread out. */
function jittered(delay: number): number {
  return Math.round(delay * (1 + Math.random() / 5));
}
