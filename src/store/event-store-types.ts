/**
 * The Events extension's part of the store (SEP-3415, `io.modelcontextprotocol/events`):
 * occurrence feeds, webhook subscriptions and deliveries owed. Re-exported by ./types.ts.
 */
import type { JsonObject } from "../protocol/messages.js";

/**
 * An occurrence as a feed keeps it (Events extension): `value` is the extension's own record
 * (the occurrence, and whom it is for); `seq` its position in the feed.
 */
export interface FeedEntry {
  /**
   * The entry's position: increasing within its feed, compared by {@link compareSeq}; opaque
   * otherwise (a Redis Stream id, `<ms>-<n>`, in both stores).
   */
  seq: string;
  /**
   * When it was appended (epoch ms), by the store's clock (the Redis server's for redisStore);
   * never after the ms of `seq`.
   */
  at: number;
  value: JsonObject;
}

/** What reading a feed gave: entries in order, and whether any after the cursor were lost. */
export interface FeedRead {
  entries: FeedEntry[];
  /**
   * The position to read on from: the last entry the read examined (those skipped by
   * `notBefore` count as read), or the feed's head when none lay after the position asked for.
   * May be before that position when the feed's head is (a feed that lost its entries).
   */
  head: string;
  /**
   * True when entries after the position asked for were trimmed away before they could be read
   * (the position is older than the feed's retention): there is a gap before `entries`. A
   * position that is exactly the newest trimmed entry's lost nothing: false.
   */
  truncated: boolean;
}

/** What an append gave: the entry's position, and false when a dedup key found an earlier one. */
export interface FeedAppend {
  seq: string;
  appended: boolean;
}

/**
 * Append-only, trimmed logs of occurrences, one per event type (Events extension): what poll
 * cursors and push streams read, on whichever process. A feed name is its own hash tag.
 */
export interface EventFeedStore {
  /**
   * Appends `value` to `feed`, trimming entries older than `retain.maxAgeMs` and beyond
   * `retain.maxLen`; resolves to its position, `appended: true`. A non-empty `dedupKey` already
   * appended within the retention (`maxAgeMs`) appends nothing and resolves to the earlier
   * entry's position (even if that entry was trimmed by `maxLen` since), `appended: false`, so
   * that the caller does not announce the duplicate as new. Trimming is exact. Positions never go
   * back, even when the clock does. Rejects a `maxLen` or `maxAgeMs` below 1.
   */
  append(
    feed: string,
    value: JsonObject,
    retain: { maxLen: number; maxAgeMs: number },
    dedupKey?: string,
  ): Promise<FeedAppend>;
  /**
   * Up to `limit` entries after position `after` (exclusive), oldest first, skipping those
   * appended before `notBefore` (epoch ms, the store's clock, see {@link FeedEntry.at}) when
   * given. Rejects a `limit` below 1 and an `after` that is not `<ms>-<n>` (a forged cursor).
   */
  read(feed: string, after: string, limit: number, notBefore?: number): Promise<FeedRead>;
  /** The newest entry's position; `0-0` for an empty or unknown feed. */
  head(feed: string): Promise<string>;
}

/** Orders two feed positions: negative when `a` comes first, 0 when equal. */
export function compareSeq(a: string, b: string): number {
  const [am = 0, an = 0] = a.split("-").map(Number);
  const [bm = 0, bn = 0] = b.split("-").map(Number);
  return am - bm || an - bn;
}

/** A webhook subscription (Events extension, `events/subscribe`), as every process sees it. */
export interface WebhookRecord {
  /** Derived from (principal, url, name, arguments): stable across refreshes and restarts. */
  id: string;
  /** The event type; the record lives in that type's hash slot. */
  name: string;
  /** Issuer and subject of the principal that subscribed (never empty: webhooks need one). */
  principal: string;
  url: string;
  arguments: JsonObject;
  /**
   * Signing secrets (`whsec_…`), newest first; an older one is kept, and signed with too, until
   * its `until` (epoch ms) during a rotation.
   */
  secrets: { secret: string; until?: number }[];
  createdAt: number;
  /** When it lapses unless refreshed (epoch ms); null for no expiry. */
  expiresAt: number | null;
  /** False while delivery is suspended after repeated failures. */
  active: boolean;
  lastDeliveryAt?: number;
  /** A category (`connection_refused`, `timeout`, `tls_error`, `http_4xx`, `http_5xx`, `challenge_failed`). */
  lastError?: string;
  failedSince?: number;
  /**
   * Feed position delivery starts after: the subscriber's cursor, or the head; on suspension,
   * the watermark then (what the reactivating refresh replays after).
   */
  from: string;
  /**
   * While a replay of the feed after `from` is being queued (epoch ms, a bound should its process
   * die): the watermark stays at `from` until then or until the replay is queued.
   */
  replayUntil?: number;
  /** Bumped by every write; writes compare it (optimistic concurrency). */
  version: number;
}

/** Webhook subscriptions, by event type, with expiry. */
export interface WebhookStore {
  /**
   * Stores or replaces a subscription if it is absent or lapsed (`expectedVersion` 0) or still
   * at `expectedVersion`; false when another write came first. It lapses at its `expiresAt`
   * (redisStore: by the Redis server's clock), after which it is gone from every method.
   */
  put(record: WebhookRecord, expectedVersion: number): Promise<boolean>;
  /** The live subscription, or undefined when unknown or lapsed. */
  get(name: string, id: string): Promise<WebhookRecord | undefined>;
  /** Deletes a subscription; false when it did not exist. */
  delete(name: string, id: string): Promise<boolean>;
  /** The live subscriptions to an event type. */
  ofEvent(name: string): Promise<WebhookRecord[]>;
}

/** One POST owed to a webhook: an occurrence or a control envelope for one subscription. */
export interface DeliveryJob {
  /** Unique per (subscription, occurrence or envelope): enqueuing it twice keeps one. */
  id: string;
  /** The subscription's event type and id. */
  name: string;
  subscription: string;
  /** The `webhook-id` header: the occurrence's `eventId`, or `msg_<type>_<random>`. */
  webhookId: string;
  /** The JSON body, as sent (signed as is). */
  body: string;
  /** Attempts made so far. */
  attempt: number;
  /** When it was first enqueued (epoch ms). */
  createdAt: number;
  /**
   * The claim that took it, as `claim` returns it: `complete` and `retry` given it act only
   * while that claim is the job's latest (not once another took it, its lease having run out).
   */
  claim?: string;
  /**
   * The feed position of the occurrence it delivers (a gap envelope's too): the job is owed to
   * its subscription at that position until completed (see {@link DeliveryQueue.oldestOwed}).
   * Absent for a control envelope, which holds no position back.
   */
  position?: string;
}

/**
 * Webhook deliveries owed, shared by every process: each job is claimed by one process at a
 * time, for a lease; a job its claimer neither completes nor retries before the lease ends is
 * claimed again by another (its claimer died).
 */
export interface DeliveryQueue {
  /** Adds jobs due at `dueAt` (epoch ms); a job whose id is queued already is kept as it is. */
  enqueue(jobs: DeliveryJob[], dueAt: number): Promise<void>;
  /**
   * Claims up to `limit` jobs due now, earliest first, for `leaseMs`: no other claim returns
   * them meanwhile; one neither completed nor retried comes due again when its lease ends. Each
   * comes with this claim's `claim` token.
   * redisStore judges "now" and lease ends by the Redis server's clock.
   */
  claim(limit: number, leaseMs: number): Promise<DeliveryJob[]>;
  /**
   * Removes a delivered (or abandoned) job, and what it owed; given the `claim` that took it,
   * only while no later claim took it.
   */
  complete(id: string, claim?: string): Promise<void>;
  /**
   * The oldest feed position still owed to `subscription` by a queued job (claimed or not,
   * retried, waiting), or undefined when none is: a webhook's safe watermark lies before it.
   */
  oldestOwed(subscription: string): Promise<string | undefined>;
  /**
   * Puts a claimed job back, due at `dueAt`, as given (the caller counts its `attempt`). Does
   * nothing once the job is no longer queued, or when its `claim` is not the latest: a claimer
   * whose lease ran out must not bring back a job its next claimer completed, nor move it under
   * the claimer that holds it now.
   */
  retry(job: DeliveryJob, dueAt: number): Promise<void>;
  /**
   * When the earliest job is due (epoch ms; a claimed job at its lease's end), or undefined
   * when none is queued.
   */
  nextDue(): Promise<number | undefined>;
}
