import type { ReplicaWait } from "./redis-replicas.js";
import { luaScript, type RedisClient } from "./redis-scripts.js";
import type { LeaseStore } from "./types.js";

/**
 * KEYS: the lease. ARGV: owner, ttl ms. Takes a free lease (SET … PX) or extends the owner's
 * own (PEXPIRE); 0 while another owner holds it. One script, so a lease expiring between a
 * failed SET NX and the extension cannot be missed.
 */
const acquireLease = luaScript(`
local holder = redis.call('GET', KEYS[1])
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/** KEYS: the lease. ARGV: owner, ttl ms. Compare-and-PEXPIRE: 0 once the lease is not ours. */
const renewLease = luaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`);

/** KEYS: the lease. ARGV: owner. Compare-and-DEL: 0 when the lease is not ours. */
const releaseLease = luaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`);

/** What the lease store needs of the Redis store. */
export interface RedisLeasesOptions {
  redis: RedisClient;
  /** The key of a lease (`<scope>/<name>`). */
  keyOf: (key: string) => string;
  /** Run after an acquisition that took the lease. */
  replicated: ReplicaWait;
  /** Rewrites a rejection so that it names the store operation. */
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/** Milliseconds as Redis takes them: a whole number, at least 1. */
function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** Leases in Redis: a string holding the owner, with a TTL; every change compares the owner. */
export function redisLeases(options: RedisLeasesOptions): LeaseStore {
  const { redis, keyOf, replicated, labelled } = options;
  return {
    acquire: (key, owner, ttlMs) =>
      labelled("leases.acquire", async () => {
        const redisKey = keyOf(key);
        const taken = (await acquireLease(redis, [redisKey], [owner, ttl(ttlMs)])) === 1;
        if (taken) await replicated(redisKey);
        return taken;
      }),
    renew: (key, owner, ttlMs) =>
      labelled(
        "leases.renew",
        async () => (await renewLease(redis, [keyOf(key)], [owner, ttl(ttlMs)])) === 1,
      ),
    release: (key, owner) =>
      labelled(
        "leases.release",
        async () => (await releaseLease(redis, [keyOf(key)], [owner])) === 1,
      ),
    holder: (key) =>
      labelled("leases.holder", async () => (await redis.get(keyOf(key))) ?? undefined),
  };
}
