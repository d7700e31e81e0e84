import type { Cluster } from "ioredis";
import { redisBus } from "./redis-bus.js";
import { redisDeliveries } from "./redis-deliveries.js";
import { redisEventLog } from "./redis-events.js";
import { redisFeeds } from "./redis-feeds.js";
import { type Keys, keyLayout } from "./redis-keys.js";
import { redisLeases } from "./redis-leases.js";
import { redisRateLimiters } from "./redis-rate-limiter.js";
import { replicaWait } from "./redis-replicas.js";
import type { RedisClient } from "./redis-scripts.js";
import { redisSessions } from "./redis-sessions.js";
import { redisTasks } from "./redis-tasks.js";
import { redisWebhooks } from "./redis-webhooks.js";
import type { McpStore, NonceStore } from "./types.js";

/**
 * Options of {@link redisStore}. ioredis queues commands while it is disconnected and fails
 * them only after `maxRetriesPerRequest` reconnection attempts (which can take a minute with its
 * defaults); give the connection `enableOfflineQueue: false` (and wait for `ready`), or
 * `maxRetriesPerRequest: 1`, for requests that fail fast while Redis is down. The store never
 * changes the options of a connection it is given.
 */
export interface RedisStoreOptions {
  /** The connection for commands (ioredis `Redis` or `Cluster`); owned and closed by the caller. */
  redis: RedisClient;
  /** Prefix of every key and channel; must not contain `{` or `}`. @default "mcp:" */
  prefix?: string;
  /** Idle time after which a legacy session, and the replay log of its streams, expire. @default 1_800_000 (30 min) */
  sessionIdleMs?: number;
  /** Events kept per SSE stream for replay. @default 1_000 */
  maxEventsPerStream?: number;
  /**
   * The pub/sub connection, owned by the caller; a `Cluster` must be made with
   * `shardedSubscribers: true`. @default a duplicate of `redis` (a Cluster's with
   * `shardedSubscribers: true`), opened on first subscribe and quit by `close()`
   */
  subscriber?: RedisClient;
  /**
   * Replicas that must acknowledge a session's creation or deletion, a lease's acquisition and
   * the Events writes {@link redisStore} lists (`WAIT`) before it resolves, so that a failover
   * keeps it. @default 0
   */
  waitReplicas?: number;
  /** Longest `WAIT` for those replicas; the write stands either way. @default 500 */
  waitTimeoutMs?: number;
}

/** Rewrites a rejection so that it says which store operation failed. */
function labelled<T>(operation: string, run: () => Promise<T>): Promise<T> {
  return run().catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Redis store: ${operation} failed: ${reason}`, { cause: error });
  });
}

function redisNonces(redis: RedisClient, keys: Keys): NonceStore {
  return {
    claim: (key, ttlMs) =>
      labelled("nonces.claim", async () => {
        const ttl = Math.max(1, Math.ceil(ttlMs));
        return (await redis.set(keys.nonce(key), "1", "PX", ttl, "NX")) === "OK";
      }),
  };
}

function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}

function wholeNumber(name: string, value: number, least: number): number {
  if (!Number.isInteger(value) || value < least) {
    const what = least === 0 ? "a whole number" : "a positive integer";
    throw new TypeError(`redisStore: ${name} must be ${what}, got ${value}`);
  }
  return value;
}

/** The options with their defaults, checked: bad configuration throws at construction. */
function settingsOf(options: RedisStoreOptions) {
  const prefix = options.prefix ?? "mcp:";
  if (/[{}]/.test(prefix))
    throw new TypeError(
      `redisStore: prefix must not contain "{" or "}" (hash tags), got ${prefix}`,
    );
  const { subscriber } = options;
  if (subscriber && isCluster(subscriber) && !subscriber.options.shardedSubscribers)
    throw new TypeError(
      "redisStore: a Cluster subscriber must be made with shardedSubscribers: true",
    );
  return {
    prefix,
    idleMs: wholeNumber("sessionIdleMs", options.sessionIdleMs ?? 30 * 60_000, 1),
    maxEvents: wholeNumber("maxEventsPerStream", options.maxEventsPerStream ?? 1_000, 1),
    waitReplicas: wholeNumber("waitReplicas", options.waitReplicas ?? 0, 0),
    waitTimeoutMs: wholeNumber("waitTimeoutMs", options.waitTimeoutMs ?? 500, 1),
  };
}

/**
 * The store's own pub/sub connection. A Cluster's has a subscriber per master
 * (`shardedSubscribers`), so that each SSUBSCRIBE reaches the master of its channel's slot.
 */
function duplicateOf(redis: RedisClient): RedisClient {
  const duplicate = isCluster(redis)
    ? redis.duplicate(undefined, { shardedSubscribers: true })
    : redis.duplicate();
  // Failures reach callers as rejected subscribe() calls; ioredis reconnects by itself.
  duplicate.on("error", () => undefined);
  return duplicate;
}

/** Longest wait for a readiness PING. */
const PING_MS = 1_000;

async function pingNow(redis: RedisClient): Promise<void> {
  // Not queued behind a reconnection: a probe must answer now.
  if (redis.status !== "ready") throw new Error(`Redis is ${redis.status}`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("Redis did not answer PING")), PING_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The store in Redis, shared by every process that connects to it: legacy sessions, replay
 * logs, single-use nonces, leases, tasks, the bus, and the Events extension's feeds, webhook
 * subscriptions and deliveries. Needs Redis 5 or later; Redis 6.2 for Events (its feeds are
 * Streams trimmed by MINID and read by exclusive ranges); Redis 7 for sharded pub/sub (older
 * ones carry sharded channels by plain pub/sub, fleet-wide).
 *
 * Nothing trusts one Redis node: a session's keys, leases and sharded channels share one hash
 * slot, every multi-key operation stays in one slot, and no answer is read as a fact about the
 * fleet. Replication is asynchronous, so a master's crash can lose its last writes, those its
 * replica had not received when promoted (a failover keeps everything else). Without
 * `waitReplicas`, those may be: a session just created (its client must initialize again) or
 * deleted (it lives on until idle), a lease just taken (another owner may take it too; the first
 * learns so at its next renew), a nonce's claim (claimable again), replay-log appends, task
 * writes, an occurrence just emitted, a webhook subscription's write, a delivery's completion
 * (delivered again: receivers dedup by `webhook-id`). With `waitReplicas: n`, sessions'
 * creations and deletions, leases' acquisitions, occurrences' appends, webhook subscriptions'
 * writes and deletions and deliveries' enqueues resolve once `n` replicas hold them (or `waitTimeoutMs` passed: then nothing more is promised),
 * so a failover keeps them; WAIT makes nothing strongly consistent. `appendonly yes` only helps
 * a node that restarts on its own data (no replica took over): without it, such a restart
 * starts empty; a failover's outcome is the promoted replica's data either way.
 *
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import { createMcpHandler } from "mcp-mount";
 * import { redisStore } from "mcp-mount/redis";
 *
 * const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
 * const mcp = createMcpHandler(server, {
 *   store: redisStore({ redis }),
 *   secret: process.env.MCP_SECRET, // the same in every process
 * });
 * ```
 */
export function redisStore(options: RedisStoreOptions): McpStore {
  const { redis } = options;
  const settings = settingsOf(options);
  const { prefix, idleMs } = settings;
  const keys = keyLayout(prefix);
  const replicated = replicaWait(redis, settings.waitReplicas, settings.waitTimeoutMs);

  let owned: RedisClient | undefined;
  const bus = redisBus({
    publisher: redis,
    channelOf: keys.channel,
    subscriber() {
      if (options.subscriber) return options.subscriber;
      owned = duplicateOf(redis);
      return owned;
    },
  });
  const rateLimiters = redisRateLimiters(redis, prefix);
  let closing: Promise<void> | undefined;

  return {
    nonces: redisNonces(redis, keys),
    bus: {
      publish: (channel, message, shard) =>
        labelled("bus.publish", () => bus.publish(channel, message, shard)),
      subscribe: (channel, listener, shard) =>
        labelled("bus.subscribe", () => bus.subscribe(channel, listener, shard)),
      epoch: () => bus.epoch(),
    },
    sessions: redisSessions({ redis, keys, idleMs, replicated, labelled }),
    events: redisEventLog({
      redis,
      keyOf: keys.log,
      maxEvents: settings.maxEvents,
      ttlMs: idleMs,
      labelled,
    }),
    leases: redisLeases({ redis, keyOf: keys.lease, replicated, labelled }),
    tasks: redisTasks(redis, prefix, labelled),
    feeds: redisFeeds({ redis, keys, replicated, labelled }),
    webhooks: redisWebhooks({ redis, keys, replicated, labelled }),
    deliveries: redisDeliveries({ redis, keys, replicated, labelled }),
    rateLimiter: (policy) => rateLimiters.limiter(policy),
    ping: () => pingNow(redis),
    close() {
      closing ??= (async () => {
        // Points spent here reach the shared count; while Redis is down they cannot.
        await rateLimiters.close().catch(() => undefined);
        await bus.close();
        if (!owned) return;
        if (owned.status === "ready") await owned.quit().catch(() => undefined);
        owned.disconnect();
      })();
      return closing;
    },
  };
}
