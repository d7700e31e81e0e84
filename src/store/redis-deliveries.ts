import type { Keys } from "./redis-keys.js";
import type { ReplicaWait } from "./redis-replicas.js";
import { luaScript, NOW_MS, type RedisClient } from "./redis-scripts.js";
import type { DeliveryJob, DeliveryQueue } from "./types.js";

/**
 * KEYS: due ids (sorted set by due time), job bodies (hash), owed entries (sorted set, all at
 * score 0, ordered by text), each job's owed entry (hash). ARGV: due time, then id, JSON and
 * owed entry ('' for none) of each job. Adds the jobs not queued yet (ZADD NX), leaving queued
 * ones, claimed or not, as they are.
 */
const enqueueJobs = luaScript(`
for i = 2, #ARGV, 3 do
  if redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    if ARGV[i + 2] ~= '' then
      redis.call('ZADD', KEYS[3], 0, ARGV[i + 2])
      redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 2])
    end
  end
end
return 1`);

/**
 * Lua: forgets what job `id` owed (its entry in KEYS[3], found through KEYS[4]) and its latest
 * claim (KEYS[5]).
 */
const FORGET_OWED = `
local function forget(id)
  local entry = redis.call('HGET', KEYS[4], id)
  if entry then
    redis.call('ZREM', KEYS[3], entry)
    redis.call('HDEL', KEYS[4], id)
  end
  redis.call('HDEL', KEYS[5], id)
end`;

/** Lua: false when `claim` names a claim (not '') other than job `id`'s latest. */
const SAME_CLAIM = `
local function held(id, claim)
  return claim == '' or redis.call('HGET', KEYS[5], id) == claim
end`;

/**
 * KEYS: due ids, job bodies, owed entries, each job's owed entry, latest claims. ARGV: limit,
 * lease ms, this claim's token. Takes the ids due by the Redis clock, earliest first, moves each
 * to the end of its lease, records the claim and returns their bodies: one script, so no two claims take a job within its lease. Lease ends come from the Redis clock as well, so
 * processes whose clocks disagree still agree on when a lease is over.
 */
const claimJobs = luaScript(`
${NOW_MS}
${FORGET_OWED}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[1])
local jobs = {}
for _, id in ipairs(ids) do
  local job = redis.call('HGET', KEYS[2], id)
  if job then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
    redis.call('HSET', KEYS[5], id, ARGV[3])
    jobs[#jobs + 1] = job
  else
    redis.call('ZREM', KEYS[1], id)
    forget(id)
  end
end
return jobs`);

/**
 * KEYS: as for a claim. ARGV: id, due time, JSON, claim ('' for any). Puts a job back only while
 * it is queued, and under the given claim: a claimer whose lease ran out must not bring back a
 * job another claimer has completed, nor move one another claimer holds.
 */
const retryJob = luaScript(`
${SAME_CLAIM}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if not held(ARGV[1], ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1`);

/** KEYS: as for a claim. ARGV: id, claim ('' for any). */
const completeJob = luaScript(`
${FORGET_OWED}
${SAME_CLAIM}
if not held(ARGV[1], ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
forget(ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])`);

/**
 * A job's entry in the owed set: its subscription, a NUL, its position with both parts padded
 * (so that text order is position order), a NUL, its id (entries stay unique).
 */
function owedEntry(job: DeliveryJob): string {
  if (job.position === undefined) return "";
  const [ms = "0", n = "0"] = job.position.split("-");
  return `${job.subscription}\0${ms.padStart(20, "0")}-${n.padStart(20, "0")}\0${job.id}`;
}

/** The position an owed entry holds. */
function positionOf(entry: string): string {
  const [ms = "0", n = "0"] = (entry.split("\0")[1] ?? "").split("-");
  const unpadded = (part: string) => part.replace(/^0+(?=\d)/, "");
  return `${unpadded(ms)}-${unpadded(n)}`;
}

/** Most jobs sent in one script, so one enqueue never holds Redis up for long. */
const MAX_BATCH = 500;

/** What the delivery queue needs of the Redis store. */
export interface RedisDeliveriesOptions {
  redis: RedisClient;
  keys: Keys;
  /** Run after jobs are enqueued (when the store waits for replicas). */
  replicated: ReplicaWait;
  /** Rewrites a rejection so that it names the store operation. */
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/**
 * Deliveries owed, in Redis: a sorted set of job ids by due time, a hash of their bodies and,
 * for the occurrences' jobs, a sorted set of (subscription, position) entries, all under one
 * fixed hash tag, so every claim is one atomic script. That is one hot slot on a
 * Cluster, on purpose: each job costs a few O(log n) commands while its POST takes
 * milliseconds to seconds, so one node's capacity (~100k commands/s) far exceeds what any
 * fleet can deliver, and sharding the queue would make every claim and `nextDue` visit every
 * shard. Due times given by callers (`enqueue`, `retry`) come from their clocks; a skew shifts
 * when a job comes due, never who holds it.
 */
export function redisDeliveries(options: RedisDeliveriesOptions): DeliveryQueue {
  const { redis, keys, replicated, labelled } = options;
  const queueKeys = [
    keys.deliveriesDue,
    keys.deliveryJobs,
    keys.deliveriesOwed,
    keys.deliveryOwedBy,
    keys.deliveryClaims,
  ];
  return {
    enqueue: (jobs, dueAt) =>
      labelled("deliveries.enqueue", async () => {
        const due = Math.ceil(dueAt);
        for (let start = 0; start < jobs.length; start += MAX_BATCH) {
          const batch = jobs.slice(start, start + MAX_BATCH);
          const args = batch.flatMap((job) => [job.id, JSON.stringify(job), owedEntry(job)]);
          await enqueueJobs(redis, queueKeys, [due, ...args]);
        }
        if (jobs.length > 0) await replicated(keys.deliveriesDue);
      }),

    claim: (limit, leaseMs) =>
      labelled("deliveries.claim", async () => {
        if (limit < 1) return [];
        const lease = Math.max(1, Math.ceil(leaseMs));
        const claim = crypto.randomUUID();
        const args = [Math.floor(limit), lease, claim];
        const jobs = (await claimJobs(redis, queueKeys, args)) as string[];
        return jobs.map((json) => ({ ...(JSON.parse(json) as DeliveryJob), claim }));
      }),

    complete: (id, claim) =>
      labelled("deliveries.complete", async () => {
        await completeJob(redis, queueKeys, [id, claim ?? ""]);
      }),

    oldestOwed: (subscription) =>
      labelled("deliveries.oldestOwed", async () => {
        const [first] = await redis.zrangebylex(
          keys.deliveriesOwed,
          `(${subscription}\0`,
          `(${subscription}\u0001`,
          "LIMIT",
          0,
          1,
        );
        return first === undefined ? undefined : positionOf(first);
      }),

    retry: (job, dueAt) =>
      labelled("deliveries.retry", async () => {
        const args = [job.id, Math.ceil(dueAt), JSON.stringify(job), job.claim ?? ""];
        await retryJob(redis, queueKeys, args);
      }),

    nextDue: () =>
      labelled("deliveries.nextDue", async () => {
        const [, score] = await redis.zrange(keys.deliveriesDue, "0", "0", "WITHSCORES");
        return score === undefined ? undefined : Number(score);
      }),
  };
}
