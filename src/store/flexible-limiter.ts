import type { RateLimiter, RateLimitPolicy, RateLimitVerdict } from "./types.js";

/** The part of a rate-limiter-flexible limiter the stores use. */
export interface FlexibleLimiter {
  readonly points: number;
  consume(key: string, points: number): Promise<FlexibleResult>;
  reward(key: string, points: number): Promise<unknown>;
}

/** rate-limiter-flexible's `RateLimiterRes`, which `consume` resolves or rejects with. */
interface FlexibleResult {
  remainingPoints: number;
  consumedPoints: number;
  msBeforeNext: number;
}

function isFlexibleResult(value: unknown): value is FlexibleResult {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as FlexibleResult).msBeforeNext === "number"
  );
}

/** The policy's window in whole seconds, as rate-limiter-flexible counts it. */
export function windowSeconds(policy: RateLimitPolicy): number {
  return policy.windowMs / 1000;
}

/**
 * The configuration error for a limiter whose package could not be loaded. The loaders import
 * it inside `try`, which bundlers read as optional: a bundle without the package still builds.
 */
export function missingPeer(cause: unknown): Error {
  return new Error(
    "rateLimit needs the optional peer dependency rate-limiter-flexible (npm install rate-limiter-flexible), which could not be loaded",
    { cause },
  );
}

/**
 * A {@link RateLimiter} over a rate-limiter-flexible limiter. A refused charge is given back, so
 * a request refused costs nothing: a cheap request still fits where a dear one did not. Until it
 * is given back the budget looks fuller than it is, which can only refuse more, never admit more.
 */
export function flexibleRateLimiter(limiter: FlexibleLimiter): RateLimiter {
  const refused = async (outcome: unknown, key: string, points: number) => {
    // Over budget rejects with the result; a store failure with an Error.
    if (!isFlexibleResult(outcome)) throw outcome;
    // Not given back (the store failed meanwhile): the window's end clears it.
    await limiter.reward(key, points).catch(() => undefined);
    const spent = outcome.consumedPoints - points;
    const remaining = Math.max(0, limiter.points - spent);
    return { allowed: false, remaining, resetMs: outcome.msBeforeNext };
  };
  return {
    consume: (key, points): Promise<RateLimitVerdict> =>
      limiter.consume(key, points).then(
        (result) => ({
          allowed: true,
          remaining: result.remainingPoints,
          resetMs: result.msBeforeNext,
        }),
        (outcome: unknown) => refused(outcome, key, points),
      ),
  };
}
