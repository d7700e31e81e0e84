import { once } from "node:events";
import { Redis } from "ioredis";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, McpServer, memoryStore } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// mcp-mount (from src: the tree as it is, no build) in one of four rate-limit modes, picked by
// BENCH_RATELIMIT: `off` and `memory` (the memory store, without and with `rateLimit`), and
// `redis-off` and `redis` (the Redis store at REDIS_URL, without and with it). The budget is too
// large to run out, so every request is charged and served: what is measured is the charge.

const mode = process.env.BENCH_RATELIMIT;
const MODES = ["off", "memory", "redis-off", "redis"];
if (mode === undefined || !MODES.includes(mode))
  throw new TypeError(`BENCH_RATELIMIT must be one of ${MODES.join(", ")}`);

async function storeFor(redisMode: boolean) {
  if (!redisMode) return memoryStore();
  const url = process.env.REDIS_URL;
  if (!url) throw new TypeError("REDIS_URL is required for the Redis modes");
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  if (redis.status !== "ready") await once(redis, "ready");
  return redisStore({ redis, prefix: `bench:${process.pid}:` });
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
const limited = mode === "memory" || mode === "redis";
const mcp = createMcpHandler(server, {
  secret: "bench-secret-0123456789abcdef",
  telemetry: false,
  store: await storeFor(mode.startsWith("redis")),
  ...(limited && {
    rateLimit: { points: Number.MAX_SAFE_INTEGER, cost: { tools: { echo: 1 } } },
  }),
});
serve(toNodeHandler(mcp));
