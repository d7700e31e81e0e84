import { BatchedRateLimiter, type SharedCounts } from "./batched-rate-limiter.js";
import { luaScript, type RedisClient } from "./redis-scripts.js";
import type { RateLimiter, RateLimitPolicy } from "./types.js";

/**
 * KEYS: one hash per window (a field per key). ARGV, for each: its TTL ms, a count c, then c
 * key/points pairs. Adds every amount; returns the totals in order.
 */
const addCounts = luaScript(`
local totals, a = {}, 1
for i = 1, #KEYS do
  local ttl, c = ARGV[a], tonumber(ARGV[a + 1])
  a = a + 2
  for _ = 1, c do
    totals[#totals + 1] = redis.call('HINCRBY', KEYS[i], ARGV[a], ARGV[a + 1])
    a = a + 2
  end
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return totals`);

/** KEYS: a window's hash. ARGV: key, points, limit, TTL ms. Adds only within the limit. */
const addWithin = luaScript(`
local total = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if total + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return {0, total} end
total = redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, total}`);

/**
 * The counts of one policy in Redis: a hash per window, whose names share one hash tag, so
 * on a Cluster one settle, whatever windows it covers, is one script on one slot.
 */
export function redisSharedCounts(redis: RedisClient, keyPrefix: string): SharedCounts {
  const windowKey = (window: number) => `${keyPrefix}:${window}`;
  return {
    async add(batches) {
      const args: (string | number)[] = [];
      for (const batch of batches) {
        args.push(batch.ttlMs, batch.keys.length);
        batch.keys.forEach((key, i) => {
          args.push(key, batch.amounts[i]!);
        });
      }
      const keys = batches.map((batch) => windowKey(batch.window));
      const flat = (await addCounts(redis, keys, args)) as number[];
      let at = 0;
      return batches.map((batch) => batch.keys.map(() => Number(flat[at++])));
    },
    async addWithin({ window, ttlMs, key, points, limit }) {
      const reply = (await addWithin(redis, [windowKey(window)], [key, points, limit, ttlMs])) as [
        number,
        number,
      ];
      return { added: reply[0] === 1, total: Number(reply[1]) };
    },
  };
}

/**
 * Budgets in Redis charged in batches (`share`): see {@link BatchedRateLimiter} for the slack.
 * `keyPrefix` is the policy's hash tag, so every window's hash lives in one Cluster slot.
 */
export function redisBatchedRateLimiter(
  redis: RedisClient,
  keyPrefix: string,
  policy: RateLimitPolicy,
): RateLimiter {
  return new BatchedRateLimiter(policy, redisSharedCounts(redis, keyPrefix));
}
