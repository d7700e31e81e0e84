// rate-limiter-flexible's entry point loads every backend it has, Node's `cluster` among them;
// the store loads the one limiter it needs by its own path, which the package types do not cover.
// Each file is CommonJS whose `module.exports` is the class.
declare module "rate-limiter-flexible/lib/RateLimiterMemory.js" {
  import { RateLimiterMemory } from "rate-limiter-flexible";
  export = RateLimiterMemory;
}

declare module "rate-limiter-flexible/lib/RateLimiterRedis.js" {
  import { RateLimiterRedis } from "rate-limiter-flexible";
  export = RateLimiterRedis;
}
