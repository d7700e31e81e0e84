import type { JsonObject } from "../protocol/messages.js";
import type { DeliveryQueue, EventFeedStore, WebhookStore } from "./event-store-types.js";

/** A legacy session as every process sees it (PROTOCOL §3). */
export interface SessionRecord {
  id: string;
  protocolVersion: string;
  clientInfo?: JsonObject;
  capabilities: JsonObject;
  /** Minimum level set with `logging/setLevel`; every level passes while unset. */
  logLevel?: string;
  /** Resource URIs subscribed with `resources/subscribe`. */
  subscriptions: string[];
  /** Issuer and subject of the principal that opened the session; empty without auth. */
  principal: string;
  /**
   * The client that opened it (its principal, else its client id, else its address), whose cap
   * of sessions it counts against; absent when the client could not be told apart.
   */
  client?: string;
  createdAt: number;
  /**
   * Bumped by every {@link SessionStore.update}; kept by the store (what `create` is given is
   * ignored). A process keeping a copy of the record compares it with what `touch` answers.
   */
  revision?: number;
}

/** What a request's read or touch of a session also records, in the same round trip. */
export interface SessionUse {
  /**
   * The requesting client: when it is the session's own (its record's `client`), the session
   * becomes that client's most recently used.
   */
  client?: string;
  /** Marks the session active for this owner (a process id), as {@link SessionStore.markActive}. */
  activeFor?: string;
}

/** Legacy session records, with idle expiry. */
export interface SessionStore {
  /** Idle time after which a session expires, in milliseconds. */
  readonly idleMs: number;
  /**
   * Stores a new session; when `maxSessions` are live, the longest idle ones are evicted.
   * Resolves to the ids of the evicted sessions. A record with a `client` joins that client's
   * sessions (see {@link ofClient}) as its most recently used.
   */
  create(record: SessionRecord, maxSessions: number): Promise<string[]>;
  /** The live session, its idle clock reset; undefined when unknown, expired or deleted. */
  get(id: string, use?: SessionUse): Promise<SessionRecord | undefined>;
  /** Changes the mutable fields of a live session. */
  update(
    id: string,
    patch: Partial<Pick<SessionRecord, "logLevel" | "subscriptions">>,
  ): Promise<void>;
  /** Whether a session is live, without resetting its idle clock. */
  exists(id: string): Promise<boolean>;
  /**
   * Resets a live session's idle clock and answers its {@link SessionRecord.revision} (0 before
   * any update); false when it is gone (expired, deleted, evicted). One cheap command: what a
   * process serving a session from memory asks on every request, so a session ended or changed
   * on another process is seen everywhere at once, whenever that process's message arrives.
   */
  touch(id: string, use?: SessionUse): Promise<number | false>;
  /** Deletes a session (and its place among its client's); false when it did not exist. */
  delete(id: string): Promise<boolean>;
  /**
   * The sessions of `client`, least recently used first (a use is a `get` or `touch` with that
   * `client`). Sessions leave it when deleted, evicted or idle past their expiry.
   */
  ofClient(client: string): Promise<string[]>;
  /**
   * Marks a session as in use by `owner` (a process: a stream open or a request running there)
   * until unmarked, or until the session ends. Whether the owner still lives is the caller's to
   * judge (its presence).
   */
  markActive(id: string, owner: string): Promise<void>;
  /** Clears `owner`'s mark on a session. */
  unmarkActive(id: string, owner: string): Promise<void>;
  /** The owners marking a session as in use. */
  activeOwners(id: string): Promise<string[]>;
}

/** One logged SSE event, replayed after `Last-Event-ID`. */
export interface LoggedEvent {
  id: string;
  message: JsonObject;
  /**
   * The fleet-wide id of the change this event delivers, if it delivers one: a GET stream that
   * moves between processes delivers a change once, even when both heard it.
   */
  eid?: string;
}

/** The replay log of SSE streams (legacy resumability), capped per stream. */
export interface EventLog {
  /** Appends an event to a stream's log. */
  append(stream: string, event: LoggedEvent): Promise<void>;
  /** Events after `lastEventId` in order; undefined when the stream or event is unknown. */
  after(stream: string, lastEventId: string): Promise<LoggedEvent[] | undefined>;
  /** Forgets a stream's log. */
  drop(stream: string): Promise<void>;
}

/** Claims single-use values across every process that shares the store. */
export interface NonceStore {
  /** True the first time `key` is claimed within `ttlMs`; false on every later claim. */
  claim(key: string, ttlMs: number): Promise<boolean>;
}

/** A message on the bus: a JSON-serialisable value. */
export type BusMessage = unknown;

/**
 * Fans messages out to every subscriber of a channel, in every process sharing the store.
 *
 * A channel is its name and, optionally, a shard: a scope (a session id) that picks where the
 * channel lives. A sharded channel is not the un-sharded channel of the same name. On Redis
 * Cluster a sharded channel reaches only the node that owns its scope's hash slot (the slot of
 * the scope's keys), instead of every node; messages on one channel from one publisher arrive
 * in the order published. Nothing is promised about order across channels.
 */
export interface EventBus {
  /**
   * Publishes on `channel` (of `shard`, when given). Resolves to how many subscribed stores the
   * node that ran the publish delivered it to: compatibility only, NOT a fact about the fleet (on
   * Redis Cluster other nodes' subscribers are not counted), so never decide anything on it.
   */
  publish(channel: string, message: BusMessage, shard?: string): Promise<number>;
  /**
   * Subscribes to `channel` (of `shard`, when given); resolves once the subscription is live, to
   * the function that ends it.
   */
  subscribe(
    channel: string,
    listener: (message: BusMessage) => void,
    shard?: string,
  ): Promise<() => Promise<void>>;
  /**
   * For a bus shared between processes: a number that changes whenever messages may have been
   * missed (each reconnection), and -1 while disconnected. State cached on the strength of the
   * bus is trusted only within one epoch. Absent for an in-process bus, which misses nothing.
   */
  epoch?(): number;
}

/**
 * Leases: a name held by one owner until its time runs out, unless renewed (presence, who owns
 * a stream). A key is `<scope>/<name>`: the scope (a session id) puts the lease in the hash slot
 * of that session's other keys, as for {@link EventLog} streams. Owners are opaque strings (a
 * process id); a lease ends by expiry or release only, never by another owner's acquire.
 */
export interface LeaseStore {
  /**
   * Takes the lease for `owner` for `ttlMs` when it is free or expired, or extends it when
   * `owner` already holds it; false (nothing changed) while another owner holds it.
   */
  acquire(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends the lease to `ttlMs` from now if `owner` still holds it; false once it was lost. */
  renew(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Frees the lease if `owner` holds it; false (nothing changed) otherwise. */
  release(key: string, owner: string): Promise<boolean>;
  /** The owner holding the lease now; undefined when it is free or expired. */
  holder(key: string): Promise<string | undefined>;
}

/** The states of a task (tasks extension); the last three are terminal. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A task (`io.modelcontextprotocol/tasks`) as every process sees it. */
export interface TaskRecord {
  /** Unguessable; doubles as a bearer handle for the task's state. */
  id: string;
  /** Issuer and subject of the principal that created it; empty without auth. */
  principal: string;
  /**
   * Whose cap of unfinished tasks it counts against, when not its principal's: an anonymous
   * caller's address, so anonymous callers (one empty principal) do not share one cap.
   */
  quota?: string;
  status: TaskStatus;
  statusMessage?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  lastUpdatedAt: number;
  /** Lifetime from creation; the record expires after it. */
  ttlMs: number;
  pollIntervalMs: number;
  /** Input requests not yet answered, by key. */
  inputRequests: JsonObject;
  /** Answers received, by key (kept: a key is never reused within a task). */
  inputResponses: JsonObject;
  result?: JsonObject;
  error?: JsonObject;
  /** The process running the work, and until when (epoch ms) its lease holds. */
  owner?: string;
  leaseUntil?: number;
  /** What to run again when the work is abandoned (idempotent tools only). */
  request?: JsonObject;
  /**
   * The W3C `traceparent` of the request that created the task (telemetry), which each run of
   * its work links to, on whichever process it runs.
   */
  traceparent?: string;
  /** Bumped by every write; writes compare it (optimistic concurrency). */
  version: number;
}

/** Task records, with expiry and a cap on each principal's unfinished tasks. */
export interface TaskStore {
  /**
   * Stores a new task; false (nothing stored) when its `quota` (else its principal) has
   * `maxActive` unfinished tasks.
   */
  create(record: TaskRecord, maxActive: number): Promise<boolean>;
  /** The task, or undefined when unknown or expired. */
  get(id: string): Promise<TaskRecord | undefined>;
  /**
   * Replaces a task if it is still at `expectedVersion` (the new record carries the next
   * version); false when another write came first or the task is gone.
   */
  replace(record: TaskRecord, expectedVersion: number): Promise<boolean>;
}

/** A budget: at most `points` per `windowMs` for each key (see {@link McpStore.rateLimiter}). */
export interface RateLimitPolicy {
  /** The points each key may spend per window. */
  points: number;
  /** A whole number of seconds, in milliseconds. */
  windowMs: number;
  /**
   * Points of a key's budget each process may spend before settling with the shared count (a
   * store spanning processes may settle them in batches); 0 or unset charges every request there.
   */
  share?: number;
}

/** What charging a key gave: whether it stayed within its budget, and what is left of it. */
export interface RateLimitVerdict {
  /** True when the charge fit in the budget (and was taken). */
  allowed: boolean;
  /** Points left in the window (0 once over). */
  remaining: number;
  /** Milliseconds until the window ends and the budget is whole again. */
  resetMs: number;
}

/** Budgets of points per window, kept where the store keeps everything else. */
export interface RateLimiter {
  /**
   * Charges `points` to `key` (atomically, across every process sharing the store); rejects only
   * when the store cannot be reached.
   */
  consume(key: string, points: number): Promise<RateLimitVerdict>;
  /** Settles what this process spent and has not yet counted in the store, and stops its timers. */
  close?(): Promise<void>;
}

export {
  compareSeq,
  type DeliveryJob,
  type DeliveryQueue,
  type EventFeedStore,
  type FeedAppend,
  type FeedEntry,
  type FeedRead,
  type WebhookRecord,
  type WebhookStore,
} from "./event-store-types.js";

/** The shared state behind a handler. Memory by default; Redis to span processes. */
export interface McpStore {
  readonly nonces: NonceStore;
  readonly bus: EventBus;
  readonly sessions: SessionStore;
  readonly events: EventLog;
  readonly tasks: TaskStore;
  readonly leases: LeaseStore;
  /**
   * The Events extension's state: occurrence feeds, webhook subscriptions, and deliveries owed.
   * A store without them cannot serve Events (custom stores written before them still work).
   */
  readonly feeds?: EventFeedStore;
  readonly webhooks?: WebhookStore;
  readonly deliveries?: DeliveryQueue;
  /**
   * Resolves when the store answers, rejects soon when it cannot be reached (readiness probes).
   * A store without it counts as reachable.
   */
  ping?(): Promise<void>;
  /**
   * Creates a limiter whose budgets live in this store (`rateLimit`). Rejects when it cannot be
   * made (the optional peer `rate-limiter-flexible` is missing). A store without it cannot back
   * `rateLimit`.
   */
  rateLimiter?(policy: RateLimitPolicy): Promise<RateLimiter>;
  /** Releases connections and timers. */
  close(): Promise<void>;
}
