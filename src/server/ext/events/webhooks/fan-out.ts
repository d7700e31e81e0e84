import { createHash } from "node:crypto";
import type { DeliveryJob, FeedEntry, WebhookRecord } from "../../../../store/types.js";
import { compareSeq } from "../../../../store/types.js";
import { canonicalJson } from "../../../../utils/canonical-json.js";
import { encodeCursor } from "../cursor.js";
import { occurrenceFor } from "../reader.js";
import type { EventContext, FanoutContext, RegisteredEvent } from "../types.js";
import type { WebhookRuntime } from "./runtime.js";
import { MAX_BODY_BYTES } from "./send.js";
import { dropIfAbandoned } from "./terminate.js";

/**
 * The job that delivers a feed entry to one subscription, or undefined when the entry is not
 * for it: appended at or before the subscription's start, targeted at another principal or
 * other arguments, or refused by the registration's `match`. The body is the occurrence after
 * `transform`, its `cursor` the entry's raw position until the worker writes the watermark at
 * send time. A body over 256 KiB is replaced by a `gap` envelope (SEP-3415, delivery profile:
 * the event is skipped, and the subscriber told).
 */
export async function deliveryFor(
  event: RegisteredEvent,
  record: WebhookRecord,
  entry: FeedEntry,
  now: number,
  argsKey = canonicalJson(record.arguments),
): Promise<DeliveryJob | undefined> {
  if (compareSeq(entry.seq, record.from) <= 0) return undefined;
  const ctx: EventContext = { principal: record.principal, delivery: "webhook" };
  const subscriber = { ctx, args: record.arguments, argsKey };
  const occurrence = await occurrenceFor(event, subscriber, entry);
  if (!occurrence) return undefined;
  const job: DeliveryJob = {
    id: `${record.id}:${occurrence.eventId}`,
    name: record.name,
    subscription: record.id,
    webhookId: occurrence.eventId,
    body: JSON.stringify({ ...occurrence, cursor: entry.seq }),
    attempt: 0,
    createdAt: now,
    // Owed to the subscription until done: its watermark stays before it (record.ts).
    position: entry.seq,
  };
  if (Buffer.byteLength(job.body) <= MAX_BODY_BYTES) return job;
  const gap = { type: "gap", cursor: encodeCursor(record.name, entry.seq) };
  return { ...job, id: `${job.id}:gap`, webhookId: gapId(job.id), body: JSON.stringify(gap) };
}

/**
 * A gap envelope's `webhook-id`, `msg_gap_<…>`: derived from its job, so that every process
 * that could enqueue it writes the same one.
 */
function gapId(jobId: string): string {
  return `msg_gap_${createHash("sha256").update(jobId).digest("hex").slice(0, 32)}`;
}

/** True while a subscription takes deliveries: not lapsed, not suspended. */
export function isLive(record: WebhookRecord, now: number): boolean {
  return record.active && (record.expiresAt === null || record.expiresAt > now);
}

/** Entries a catch-up reads at once, and in all (a feed keeps no more than its `maxLen`). */
const CHUNK = 256;
const MAX_CATCH_UP = 100_000;

/**
 * Enqueues what the feed holds after a subscription's `from`, up to the head read now, right
 * after the record was stored: for a new one, a replay from the subscriber's cursor and what was
 * appended before the record was there for the fan-out to see; for one a refresh reactivated,
 * what was appended while it was suspended (a job still queued is kept once). An entry appended later is `emit`'s to
 * fan out: read here too, it would be queued again once its first job was done.
 */
export async function catchUp(
  runtime: WebhookRuntime,
  event: RegisteredEvent,
  record: WebhookRecord,
): Promise<void> {
  const argsKey = canonicalJson(record.arguments);
  const end = await runtime.feeds.head(record.name);
  let position = record.from;
  for (let read = 0; read * CHUNK < MAX_CATCH_UP; read++) {
    if (compareSeq(position, end) >= 0) return;
    const page = await runtime.feeds.read(record.name, position, CHUNK);
    const entries = page.entries.filter((entry) => compareSeq(entry.seq, end) <= 0);
    const jobs: DeliveryJob[] = [];
    const now = Date.now();
    for (const entry of entries) {
      position = entry.seq;
      const job = await deliveryFor(event, record, entry, now, argsKey).catch((error: unknown) => {
        runtime.host.onError(error);
        return undefined;
      });
      if (job) jobs.push(job);
    }
    if (jobs.length > 0) {
      await runtime.deliveries.enqueue(jobs, now);
      runtime.wake();
    }
    if (entries.length < CHUNK) return;
  }
}

/**
 * The fan-out `emit` calls after appending to this handler's store (`enqueueDeliveries`): one
 * job per live subscription the occurrence is for, id `<subscription>:<eventId>`, so that however
 * many processes fan the same entry out, it is queued once. A suspended subscription is owed
 * nothing new: the refresh that reactivates it replays the feed from its frozen watermark.
 */
export async function enqueueDeliveries(
  runtime: WebhookRuntime,
  ctx: FanoutContext,
  entry: FeedEntry,
): Promise<void> {
  const jobs: DeliveryJob[] = [];
  for (const record of await runtime.webhooks.ofEvent(ctx.registration.descriptor.name)) {
    // A suspended no-expiry subscription failing for long is dropped (told in the background).
    if (!record.active) dropIfAbandoned(runtime, record, ctx.now).catch(runtime.host.onError);
    if (!isLive(record, ctx.now)) continue;
    try {
      const job = await deliveryFor(ctx.registration, record, entry, ctx.now);
      if (job) jobs.push(job);
    } catch (error) {
      // A hook that throws skips this subscription's delivery, not everyone's.
      runtime.host.onError(error);
    }
  }
  if (jobs.length === 0) return;
  await runtime.deliveries.enqueue(jobs, ctx.now);
  runtime.wake();
}
