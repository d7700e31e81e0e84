import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Redis as RedisConnection } from "ioredis";
import { createMcpHandler, type McpStore, McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { registerConformanceFixtures } from "./fixtures.js";

// The conformance server: `npm run build && npm run conformance:server`, then point the
// conformance CLI at the printed URL. PORT=0 picks a free port; REDIS_URL puts the store in Redis.
const port = Number(process.env.PORT ?? 3001);
const host = "127.0.0.1";

// A fixed development secret, so every run (and every process) seals requestState the same way.
const secret = process.env.MCP_SECRET ?? "mcp-mount-conformance-dev-secret";
if (process.env.MCP_SECRET === undefined)
  console.warn("MCP_SECRET is not set: using a fixed development secret. Set it in production.");

// ioredis and the Redis store load only when asked for.
let redis: RedisConnection | undefined;
let store: McpStore | undefined;
if (process.env.REDIS_URL) {
  const { Redis } = await import("ioredis");
  const { redisStore } = await import("mcp-mount/redis");
  redis = new Redis(process.env.REDIS_URL);
  redis.on("error", (error: Error) => console.error(`Redis: ${error.message}`));
  store = redisStore({ redis });
}

const server = registerConformanceFixtures(
  new McpServer({ name: "mcp-mount-conformance", version: "1.0.0" }),
);
const mcp = createMcpHandler(server, { secret, store });
const listener = toNodeHandler(mcp);
const httpServer = createServer((req, res) => {
  if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") {
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found: the endpoint is /mcp\n");
    return;
  }
  void listener(req, res);
});

httpServer.listen(port, host, () => {
  const { port: bound } = httpServer.address() as AddressInfo;
  console.log(`MCP conformance server listening on http://${host}:${bound}/mcp`);
});

let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(0), 2_000).unref();
  await mcp.close();
  await redis?.quit().catch(() => redis?.disconnect());
  httpServer.close(() => process.exit(0));
  httpServer.closeAllConnections();
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
