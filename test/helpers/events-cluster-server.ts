import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { createEventsServer } from "./events-server.js";
import { redisFromEnv } from "./redis-from-env.js";

// One backend of test/events/cluster.test.ts: the events suites' server on the Redis store, as
// its own process, with an `emit_event` tool that emits note.created here. Env: REDIS_URL or
// REDIS_CLUSTER_NODES, PORT (0 picks one), HEARTBEAT_MS. Prints `listening <port>` once ready.

const server = createEventsServer();
server.tool(
  {
    name: "emit_event",
    input: {
      type: "object",
      properties: { id: { type: "string" }, tag: { type: "string" } },
      required: ["id"],
    },
  },
  async ({ id, tag }) => {
    const data = tag === undefined ? { id: String(id) } : { id: String(id), tag: String(tag) };
    const { cursor } = await server.emit("note.created", data);
    return { pid: process.pid, cursor };
  },
);
server.tool({ name: "whoami" }, () => ({ pid: process.pid }));

const redis = await redisFromEnv("events-cluster-server");
const store = redisStore({ redis });
const mcp = createMcpHandler(server, {
  store,
  events: { heartbeatMs: Number(process.env.HEARTBEAT_MS ?? 1_000) },
});

// The store shares one subscriber connection, whose replies come in order: once this probe's
// SUBSCRIBE is confirmed, so is the handler's change subscription.
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
  setTimeout(() => process.exit(code), 6_000).unref();
  await mcp.close({ graceMs: 3_000 }).catch(() => undefined);
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
