import { createHash } from "node:crypto";
import { isObject, type JsonObject } from "../../../../protocol/messages.js";
import type { DeliveryJob, DeliveryQueue, WebhookRecord } from "../../../../store/types.js";
import { compareSeq } from "../../../../store/types.js";
import { encodeCursor, positionBefore } from "../cursor.js";
import { canonicalJson } from "../../../../utils/canonical-json.js";
import type { ResolvedWebhookOptions } from "./options.js";

/**
 * The subscription's id: a truncated SHA-256 of the canonical key (principal, url, name,
 * arguments) (SEP-3415, subscription identity), stable across refreshes and restarts.
 */
export function subscriptionId(
  principal: string,
  url: string,
  name: string,
  args: JsonObject,
): string {
  const key = canonicalJson([principal, url, name, args]);
  return `sub_${createHash("sha256").update(key).digest("hex").slice(0, 24)}`;
}

/**
 * When a subscription granted now lapses (SEP-3415, subscription TTL): the suggestion within
 * [minTtlMs, maxTtlMs] (clamped up to the floor, never beyond the cap), the default when none was
 * suggested, and no expiry (null) only when asked for and allowed.
 */
export function grantedExpiry(
  suggestion: unknown,
  options: ResolvedWebhookOptions,
  now: number,
): number | null {
  if (suggestion === null) return options.noExpiry ? null : now + options.maxTtlMs;
  const ttl =
    typeof suggestion === "number" && Number.isFinite(suggestion) ? suggestion : options.ttlMs;
  return now + Math.min(options.maxTtlMs, Math.max(options.minTtlMs, Math.floor(ttl)));
}

/** `deliveryStatus` as a refresh reports it: how deliveries went before this refresh. */
export function deliveryStatus(record: WebhookRecord): JsonObject {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const status: JsonObject = {
    active: record.active,
    lastDeliveryAt: iso(record.lastDeliveryAt),
    lastError: record.lastError ?? null,
  };
  if (record.failedSince !== undefined) status.failedSince = iso(record.failedSince);
  return status;
}

/** True while deliveries to the subscription are failing (none has succeeded since). */
export function isFailing(record: WebhookRecord): boolean {
  return record.failedSince !== undefined || !record.active;
}

/** How long a replay may hold a subscription's watermark at its start at most. */
export const REPLAY_HOLD_MS = 300_000;

/**
 * The safe-to-persist watermark of a subscription (SEP-3415, webhook event delivery: a cursor
 * goes out only once every earlier event was acknowledged or abandoned): `upTo` when no queued
 * job owes the subscription an earlier position, else the position just before the oldest one
 * owed; never past `from` while a replay is being queued (`replayUntil`). `delivering`: `upTo`
 * is the position of the occurrence the cursor rides with, which its own job owes until this
 * very delivery succeeds.
 */
export async function watermark(
  deliveries: DeliveryQueue,
  record: WebhookRecord,
  upTo: string,
  delivering = false,
): Promise<string> {
  const oldest = await deliveries.oldestOwed(record.id);
  const order = oldest === undefined ? 1 : compareSeq(oldest, upTo);
  const owed = order < 0 || (order === 0 && !delivering) ? positionBefore(oldest!) : upTo;
  const replaying = (record.replayUntil ?? 0) > Date.now();
  return replaying && compareSeq(record.from, owed) < 0 ? record.from : owed;
}

/**
 * A job's body as sent now: the cursor of an occurrence (its raw feed position in the queue) or
 * of a gap envelope becomes the subscription's watermark at this moment; any other control
 * envelope is sent as queued.
 */
export async function bodyToSend(
  deliveries: DeliveryQueue,
  job: DeliveryJob,
  record: WebhookRecord,
): Promise<string> {
  const body: unknown = JSON.parse(job.body);
  if (!isObject(body) || typeof body.cursor !== "string") return job.body;
  const occurrence = typeof body.type !== "string";
  // A job queued before jobs carried their position has it in its body.
  const position = job.position ?? (occurrence ? body.cursor : undefined);
  if (position === undefined) return job.body;
  const safe = await watermark(deliveries, record, position, true);
  body.cursor = encodeCursor(job.name, safe);
  return JSON.stringify(body);
}

/** The secrets after a refresh with `secret`: a replaced one keeps signing for the grace window. */
export function rotatedSecrets(
  record: WebhookRecord,
  secret: string,
  graceMs: number,
  now: number,
): WebhookRecord["secrets"] {
  const [current, ...older] = record.secrets;
  if (!current || current.secret === secret) return record.secrets.filter(stillSigning(now));
  return [
    { secret },
    { secret: current.secret, until: now + graceMs },
    ...older.filter((entry) => (entry.until ?? 0) > now),
  ].filter(
    (entry, index, all) => all.findIndex((other) => other.secret === entry.secret) === index,
  );
}

function stillSigning(now: number) {
  return (entry: { until?: number }, index: number) => index === 0 || (entry.until ?? 0) > now;
}
