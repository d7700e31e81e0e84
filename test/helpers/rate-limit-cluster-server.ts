import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { toNodeHandler } from "../../src/adapters/node.js";
import { bearerAuth } from "../../src/auth/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";

// One backend of test/cluster/rate-limit.test.ts: a rate-limited endpoint on the Redis store,
// whose callers are told apart by their bearer token (the token is the subject). Env: REDIS_URL
// (required), PORT, RATE_POINTS (the budget per minute). Prints `listening <port>` once ready.

const redisUrl = process.env.REDIS_URL;
if (!redisUrl) throw new Error("rate-limit-cluster-server: REDIS_URL is required");

const server = new McpServer({ name: "rate-limited", version: "1.0.0" });
server.tool({ name: "cheap" }, () => ({ pid: process.pid }));
server.tool({ name: "expensive" }, () => ({ pid: process.pid }));

const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
redis.on("error", () => undefined);
if (redis.status !== "ready") await once(redis, "ready");
const mcp = createMcpHandler(server, {
  store: redisStore({ redis }),
  auth: bearerAuth({
    authorizationServers: ["https://auth.example.com"],
    verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
  }),
  rateLimit: {
    points: Number(process.env.RATE_POINTS ?? 30),
    cost: { tools: { expensive: 3 } },
  },
});

const httpServer = createServer(toNodeHandler(mcp));
httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(httpServer.address() as AddressInfo).port}\n`);
});

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(0), 3_000).unref();
  await mcp.close().catch(() => undefined);
  httpServer.close(() => {
    redis.disconnect();
    process.exit(0);
  });
  httpServer.closeAllConnections();
}
process.once("SIGTERM", () => void shutdown());
process.once("SIGINT", () => void shutdown());
