import type RateLimiterRedis from "rate-limiter-flexible/lib/RateLimiterRedis.js";
import { flexibleRateLimiter, missingPeer, windowSeconds } from "./flexible-limiter.js";
import { redisBatchedRateLimiter } from "./redis-batched-rate-limiter.js";
import type { RedisClient } from "./redis-scripts.js";
import type { RateLimiter, RateLimitPolicy } from "./types.js";

/**
 * Budgets in Redis (rate-limiter-flexible's `RateLimiterRedis` on the store's connection): one
 * key per budget, charged by one script, so every process sharing the store spends the same
 * budget and none can overdraw it. While Redis is down a charge fails as the connection's own
 * options say, as every other store operation does (at once without the offline queue).
 */
export async function redisRateLimiter(
  redis: RedisClient,
  keyPrefix: string,
  policy: RateLimitPolicy,
): Promise<RateLimiter> {
  let Limiter: typeof RateLimiterRedis;
  try {
    Limiter = (await import("rate-limiter-flexible/lib/RateLimiterRedis.js")).default;
  } catch (error) {
    throw missingPeer(error);
  }
  return flexibleRateLimiter(
    new Limiter({
      storeClient: redis,
      keyPrefix,
      points: policy.points,
      duration: windowSeconds(policy),
    }),
  );
}

/** The Redis store's limiters: one per policy, and a `close` that settles the batched ones. */
export interface RedisRateLimiters {
  limiter(policy: RateLimitPolicy): Promise<RateLimiter>;
  /** Settles every point spent here and not yet counted in Redis (see `share`). */
  close(): Promise<void>;
}

/**
 * Makes a store's limiters, keyed by the policy too, so handlers with different budgets never
 * share a counter. A policy with a `share` is charged in batches (its keys under one hash tag,
 * one Cluster slot); without one each charge is one round trip, as exact as Redis itself.
 */
export function redisRateLimiters(redis: RedisClient, prefix: string): RedisRateLimiters {
  const made = new Map<string, Promise<RateLimiter>>();
  return {
    limiter(policy) {
      const budget = `${policy.points}/${policy.windowMs}`;
      const batched = (policy.share ?? 0) > 0;
      const id = batched ? `${budget}/${policy.share}` : budget;
      let limiter = made.get(id);
      if (!limiter) {
        limiter = batched
          ? Promise.resolve(redisBatchedRateLimiter(redis, `${prefix}{rl:${budget}}`, policy))
          : redisRateLimiter(redis, `${prefix}rl:${budget}`, policy);
        made.set(id, limiter);
      }
      return limiter;
    },
    async close() {
      const limiters = await Promise.allSettled(made.values());
      await Promise.all(
        limiters.map((made) => (made.status === "fulfilled" ? made.value.close?.() : undefined)),
      );
    },
  };
}
