import type RateLimiterRedis from "rate-limiter-flexible/lib/RateLimiterRedis.js";
import { flexibleRateLimiter, missingPeer, windowSeconds } from "./flexible-limiter.js";
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
