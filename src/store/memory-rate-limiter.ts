import type RateLimiterMemory from "rate-limiter-flexible/lib/RateLimiterMemory.js";
import { flexibleRateLimiter, missingPeer, windowSeconds } from "./flexible-limiter.js";
import type { RateLimiter, RateLimitPolicy } from "./types.js";

/**
 * Budgets in this process's memory (rate-limiter-flexible's `RateLimiterMemory`), one limiter
 * per policy, so handlers sharing the store share budgets as they share sessions. Loaded by its
 * own path, which needs nothing of Node, so a bundle for the edge carries it too.
 */
export function memoryRateLimiters(): (policy: RateLimitPolicy) => Promise<RateLimiter> {
  const limiters = new Map<string, Promise<RateLimiter>>();
  return (policy) => {
    const key = `${policy.points}/${policy.windowMs}`;
    let limiter = limiters.get(key);
    if (!limiter) {
      limiter = memoryRateLimiter(policy);
      limiters.set(key, limiter);
    }
    return limiter;
  };
}

async function memoryRateLimiter(policy: RateLimitPolicy): Promise<RateLimiter> {
  let Limiter: typeof RateLimiterMemory;
  try {
    Limiter = (await import("rate-limiter-flexible/lib/RateLimiterMemory.js")).default;
  } catch (error) {
    throw missingPeer(error);
  }
  return flexibleRateLimiter(
    new Limiter({ points: policy.points, duration: windowSeconds(policy) }),
  );
}
