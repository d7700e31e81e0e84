import type { Redis as RedisConnection } from "ioredis";
import type { McpStore } from "mcp-mount";
import { createExampleApp } from "./app.js";

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";

// Every process behind one endpoint must seal requestState with the same secret, so a
// multi round-trip request can finish on any of them.
const secret = process.env.MCP_SECRET ?? "mcp-mount-example-dev-secret";
if (process.env.MCP_SECRET === undefined)
  console.warn("MCP_SECRET is not set: using a fixed development secret. Set it in production.");

// With REDIS_URL, sessions, nonces and change notifications are shared with every process on
// that Redis; ioredis and the Redis store load only then.
let redis: RedisConnection | undefined;
let store: McpStore | undefined;
if (process.env.REDIS_URL) {
  const { Redis } = await import("ioredis");
  const { redisStore } = await import("mcp-mount/redis");
  redis = new Redis(process.env.REDIS_URL);
  redis.on("error", (error: Error) => console.error(`Redis: ${error.message}`));
  store = redisStore({ redis });
}

const { app, mcp } = createExampleApp({ secret, store });

const httpServer = app.listen(port, host, () => {
  const url = `http://${host}:${port}/mcp`;
  console.log(`MCP server listening on ${url}${store ? " (Redis store)" : ""}`);
  console.log("Try it:");
  console.log(
    `  curl -s ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: echo' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`,
  );
});

let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(0), 5_000).unref();
  await mcp.close();
  await redis?.quit().catch(() => redis?.disconnect());
  httpServer.close(() => process.exit(0));
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
