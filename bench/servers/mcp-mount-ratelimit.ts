import { once } from "node:events";
import { Redis } from "ioredis";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, McpServer, memoryStore } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// mcp-mount (from src: the tree as it is, no build) in one of five rate-limit modes, picked by
// BENCH_RATELIMIT: `off` and `memory` (the memory store, without and with `rateLimit`), and
// `redis-off`, `redis` and `redis-batched` (the Redis store at REDIS_URL, without `rateLimit`,
// with it exact, and with a `share`). The budget is too large to run out, so every request is
// charged and served: what is measured is the charge. BENCH_RATE_POINTS, BENCH_RATE_SHARE and
// BENCH_RATE_PREFIX (a prefix several processes share) set up the overshoot run instead.

const mode = process.env.BENCH_RATELIMIT;
const MODES = ["off", "memory", "redis-off", "redis", "redis-batched"];
if (mode === undefined || !MODES.includes(mode))
  throw new TypeError(`BENCH_RATELIMIT must be one of ${MODES.join(", ")}`);

async function storeFor(redisMode: boolean) {
  if (!redisMode) return memoryStore();
  const url = process.env.REDIS_URL;
  if (!url) throw new TypeError("REDIS_URL is required for the Redis modes");
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  if (redis.status !== "ready") await once(redis, "ready");
  return redisStore({ redis, prefix: process.env.BENCH_RATE_PREFIX ?? `bench:${process.pid}:` });
}

const server = new McpServer({ name: `bench-ratelimit-${mode}`, version: "1.0.0" });
server.tool(
  {
    name: "echo",
    description: ECHO_DESCRIPTION,
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  ({ text }) => String(text),
);
const limited = mode === "memory" || mode === "redis" || mode === "redis-batched";
const points = Number(process.env.BENCH_RATE_POINTS ?? Number.MAX_SAFE_INTEGER);
const share = mode === "redis-batched" ? Number(process.env.BENCH_RATE_SHARE ?? 100) : 0;
const mcp = createMcpHandler(server, {
  secret: "bench-secret-0123456789abcdef",
  telemetry: false,
  store: await storeFor(mode.startsWith("redis")),
  ...(limited && {
    rateLimit: { points, share, windowMs: 86_400_000, cost: { tools: { echo: 1 } } },
  }),
});
serve(toNodeHandler(mcp));
