import type { ChainableCommander, Cluster } from "ioredis";
import { redisBus } from "./redis-bus.js";
import { redisEventLog } from "./redis-events.js";
import { redisRateLimiter } from "./redis-rate-limiter.js";
import {
  admitSession,
  getSession,
  type RedisClient,
  touchSession,
  updateSession,
} from "./redis-scripts.js";
import { redisTasks } from "./redis-tasks.js";
import type { McpStore, NonceStore, SessionRecord, SessionStore } from "./types.js";

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
  /** The pub/sub connection, owned by the caller. @default `redis.duplicate()`, opened on first subscribe and quit by `close()` */
  subscriber?: RedisClient;
}

/**
 * Where everything lives. A session's keys share the hash tag `{s:<id>}`, so on Redis Cluster
 * they sit in one slot and each operation on them is one single-slot command or script.
 */
function keyLayout(prefix: string) {
  return {
    session: (id: string) => `${prefix}{s:${id}}:rec`,
    /** Sorted set of live session ids by last use, for `maxSessions`. */
    sessionIndex: `${prefix}sessions`,
    /** `stream` is `<sessionId>/<streamId>`: the session part chooses the slot. */
    log(stream: string) {
      const slash = stream.indexOf("/");
      if (slash === -1) return `${prefix}{s:${stream}}:log`;
      return `${prefix}{s:${stream.slice(0, slash)}}:log:${stream.slice(slash + 1)}`;
    },
    nonce: (key: string) => `${prefix}nonce:${key}`,
  };
}

type Keys = ReturnType<typeof keyLayout>;

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** Runs a MULTI block (one round trip) and throws the first error of its commands. */
async function exec(transaction: ChainableCommander): Promise<void> {
  const results = await transaction.exec();
  if (!results) throw new Error("Redis aborted the transaction");
  for (const [error] of results) if (error) throw error;
}

/** Rewrites a rejection so that it says which store operation failed. */
function labelled<T>(operation: string, run: () => Promise<T>): Promise<T> {
  return run().catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Redis store: ${operation} failed: ${reason}`, { cause: error });
  });
}

function redisSessions(redis: RedisClient, keys: Keys, idleMs: number): SessionStore {
  return {
    idleMs,
    create: (record, maxSessions) =>
      labelled("sessions.create", async () => {
        const key = keys.session(record.id);
        const { logLevel, subscriptions, ...fixed } = record;
        const fields: Record<string, string> = {
          record: JSON.stringify(fixed),
          subscriptions: JSON.stringify(subscriptions),
        };
        if (logLevel !== undefined) fields.logLevel = logLevel;
        const [evicted] = await Promise.all([
          admitSession(redis, [keys.sessionIndex], [record.id, maxSessions, idleMs]),
          exec(redis.multi().del(key).hset(key, fields).pexpire(key, idleMs)),
        ]);
        if (!isStringArray(evicted)) return [];
        await Promise.all(evicted.map((id) => redis.del(keys.session(id))));
        return evicted;
      }),

    get: (id) =>
      labelled("sessions.get", async () => {
        const [fields] = await Promise.all([
          getSession(redis, [keys.session(id)], [idleMs]),
          touchSession(redis, [keys.sessionIndex], [id, idleMs]),
        ]);
        if (!Array.isArray(fields) || typeof fields[0] !== "string") {
          await redis.zrem(keys.sessionIndex, id); // a stale index entry, if any
          return undefined;
        }
        const [fixed, logLevel, subscriptions] = fields as [string, string | null, string | null];
        const record: SessionRecord = {
          ...JSON.parse(fixed),
          subscriptions: subscriptions ? JSON.parse(subscriptions) : [],
        };
        if (logLevel) record.logLevel = logLevel;
        return record;
      }),

    update: (id, patch) =>
      labelled("sessions.update", async () => {
        const set: string[] = [];
        const unset: string[] = [];
        if ("logLevel" in patch) {
          if (patch.logLevel === undefined) unset.push("logLevel");
          else set.push("logLevel", patch.logLevel);
        }
        if ("subscriptions" in patch)
          set.push("subscriptions", JSON.stringify(patch.subscriptions ?? []));
        if (set.length + unset.length === 0) return;
        await updateSession(redis, [keys.session(id)], [set.length / 2, ...set, ...unset]);
      }),

    exists: (id) =>
      labelled("sessions.exists", async () => (await redis.exists(keys.session(id))) === 1),

    delete: (id) =>
      labelled("sessions.delete", async () => {
        const [deleted] = await Promise.all([
          redis.del(keys.session(id)),
          redis.zrem(keys.sessionIndex, id),
        ]);
        return deleted === 1;
      }),
  };
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

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new TypeError(`redisStore: ${name} must be a positive integer, got ${value}`);
  return value;
}

/** Longest wait for a readiness PING. */
const PING_MS = 1_000;

/**
 * The store in Redis, shared by every process that connects to it: legacy sessions, replay
 * logs, single-use nonces, tasks and the change bus. Needs Redis 5 or later.
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
  const prefix = options.prefix ?? "mcp:";
  if (/[{}]/.test(prefix))
    throw new TypeError(
      `redisStore: prefix must not contain "{" or "}" (hash tags), got ${prefix}`,
    );
  const idleMs = positiveInteger("sessionIdleMs", options.sessionIdleMs ?? 30 * 60_000);
  const maxEvents = positiveInteger("maxEventsPerStream", options.maxEventsPerStream ?? 1_000);
  const keys = keyLayout(prefix);

  let owned: RedisClient | undefined;
  const bus = redisBus({
    publisher: redis,
    prefix,
    subscriber() {
      if (options.subscriber) return options.subscriber;
      const duplicate = isCluster(redis) ? redis.duplicate() : redis.duplicate();
      // Failures reach callers as rejected subscribe() calls; ioredis reconnects by itself.
      duplicate.on("error", () => undefined);
      owned = duplicate;
      return duplicate;
    },
  });
  let closing: Promise<void> | undefined;

  return {
    nonces: redisNonces(redis, keys),
    bus: {
      publish: (channel, message) => labelled("bus.publish", () => bus.publish(channel, message)),
      subscribe: (channel, listener) =>
        labelled("bus.subscribe", () => bus.subscribe(channel, listener)),
      epoch: () => bus.epoch(),
    },
    sessions: redisSessions(redis, keys, idleMs),
    events: redisEventLog({ redis, keyOf: keys.log, maxEvents, ttlMs: idleMs, labelled }),
    tasks: redisTasks(redis, prefix, labelled),
    // Keyed by the policy too: handlers with different budgets never share a counter.
    rateLimiter: (policy) =>
      redisRateLimiter(redis, `${prefix}rl:${policy.points}/${policy.windowMs}`, policy),
    async ping() {
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
    },
    close() {
      closing ??= (async () => {
        await bus.close();
        if (!owned) return;
        if (owned.status === "ready") await owned.quit().catch(() => undefined);
        owned.disconnect();
      })();
      return closing;
    },
  };
}
