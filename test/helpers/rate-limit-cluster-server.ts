import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { bearerAuth } from "../../src/auth/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { redisFromEnv } from "./redis-from-env.js";

// One backend of test/cluster/rate-limit.test.ts: a rate-limited endpoint on the Redis store,
// whose callers are told apart by their bearer token (the token is the subject). Env: REDIS_URL
// (required), PORT, RATE_POINTS (the budget per window), RATE_WINDOW_MS (default a minute),
// RATE_SHARE (rateLimit.share: batched; default 0, exact). Prints `listening <port>` once ready.

const server = new McpServer({ name: "rate-limited", version: "1.0.0" });
server.tool({ name: "cheap" }, () => ({ pid: process.pid }));
server.tool({ name: "expensive" }, () => ({ pid: process.pid }));

const redis = await redisFromEnv("rate-limit-cluster-server");
const mcp = createMcpHandler(server, {
  store: redisStore({ redis }),
  auth: bearerAuth({
    authorizationServers: ["https://auth.example.com"],
    verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
  }),
  rateLimit: {
    points: Number(process.env.RATE_POINTS ?? 30),
    windowMs: Number(process.env.RATE_WINDOW_MS ?? 60_000),
    share: Number(process.env.RATE_SHARE ?? 0),
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
