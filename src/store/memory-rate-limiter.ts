import type RateLimiterMemory from "rate-limiter-flexible/lib/RateLimiterMemory.js";
import { flexibleRateLimiter, missingPeer, windowSeconds } from "./flexible-limiter.js";
import type { RateLimiter, RateLimitPolicy } from "./types.js";

/**
 * Budgets in this process's memory (rate-limiter-flexible's `RateLimiterMemory`). Loaded by its
 * own path, which needs nothing of Node, so a bundle for the edge carries it too.
 */
export async function memoryRateLimiter(policy: RateLimitPolicy): Promise<RateLimiter> {
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
