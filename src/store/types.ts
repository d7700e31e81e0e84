import type { JsonObject } from "../protocol/messages.js";

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
  createdAt: number;
}

/** Legacy session records, with idle expiry. */
export interface SessionStore {
  /** Idle time after which a session expires, in milliseconds. */
  readonly idleMs: number;
  /**
   * Stores a new session; when `maxSessions` are live, the longest idle ones are evicted.
   * Resolves to the ids of the evicted sessions.
   */
  create(record: SessionRecord, maxSessions: number): Promise<string[]>;
  /** The live session, its idle clock reset; undefined when unknown, expired or deleted. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Changes the mutable fields of a live session. */
  update(
    id: string,
    patch: Partial<Pick<SessionRecord, "logLevel" | "subscriptions">>,
  ): Promise<void>;
  /** Whether a session is live, without resetting its idle clock. */
  exists(id: string): Promise<boolean>;
  /** Deletes a session; false when it did not exist. */
  delete(id: string): Promise<boolean>;
}

/** One logged SSE event, replayed after `Last-Event-ID`. */
export interface LoggedEvent {
  id: string;
  message: JsonObject;
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

/** Fans messages out to every subscriber of a channel, in every process sharing the store. */
export interface EventBus {
  /** Publishes; resolves to how many stores (processes) subscribed to the channel received it. */
  publish(channel: string, message: BusMessage): Promise<number>;
  /** Subscribes; resolves once the subscription is live, to the function that ends it. */
  subscribe(channel: string, listener: (message: BusMessage) => void): Promise<() => Promise<void>>;
  /**
   * For a bus shared between processes: a number that changes whenever messages may have been
   * missed (each reconnection), and -1 while disconnected. State cached on the strength of the
   * bus is trusted only within one epoch. Absent for an in-process bus, which misses nothing.
   */
  epoch?(): number;
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
}

/** The shared state behind a handler. Memory by default; Redis to span processes. */
export interface McpStore {
  readonly nonces: NonceStore;
  readonly bus: EventBus;
  readonly sessions: SessionStore;
  readonly events: EventLog;
  readonly tasks: TaskStore;
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
