import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { createEventsServer, tokenAuth } from "./events-server.js";
import { redisFromEnv } from "./redis-from-env.js";

// One backend of test/events/webhooks-fleet.test.ts: the events suites' server on the Redis
// store with webhooks on (receivers on 127.0.0.1 allowed, short retry delays, suspension at
// the first abandoned event), bearer auth
// (the token is the subject), and an `emit_event` tool that emits note.created here and answers
// its eventId. Env: REDIS_URL or REDIS_CLUSTER_NODES, PORT (0 picks one). Prints
// `listening <port>` once ready; SIGTERM drains (deliveries in flight finish) and exits.

const server = createEventsServer();
server.tool(
  {
    name: "emit_event",
    input: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
  },
  async ({ id }) => {
    const { eventId } = await server.emit("note.created", { id: String(id) });
    return { pid: process.pid, eventId };
  },
);

const redis = await redisFromEnv("webhook-cluster-server");
const store = redisStore({ redis });
const mcp = createMcpHandler(server, {
  store,
  auth: tokenAuth(),
  events: {
    webhooks: {
      allow: ["127.0.0.1"],
      retryDelaysMs: [100, 300, 1_000, 2_000],
      timeoutMs: 3_000,
      // Suspended as soon as an event runs out of retries, for the failure test.
      suspendAfterMs: 0,
      suspendedRecheckMs: 200,
    },
  },
});

// The store shares one subscriber connection, whose replies come in order: once this probe's
// SUBSCRIBE is confirmed, so are the handler's subscriptions made before it.
const unsubscribe = await store.bus.subscribe("cluster-ready", () => undefined);
await unsubscribe();

const httpServer = createServer(toNodeHandler(mcp));
httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(httpServer.address() as AddressInfo).port}\n`);
});

let closing = false;
async function shutdown(code: number): Promise<void> {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(code), 8_000).unref();
  await mcp.close({ graceMs: 5_000 }).catch(() => undefined);
  httpServer.close(() => {
    redis.disconnect();
    process.exit(code);
  });
  httpServer.closeIdleConnections();
  setTimeout(() => httpServer.closeAllConnections(), 500).unref();
}
process.once("SIGTERM", () => void shutdown(0));
process.once("SIGINT", () => void shutdown(0));
// The harness holds our stdin open: when it goes away, however it died, so do we.
process.stdin.on("end", () => void shutdown(0)).resume();
