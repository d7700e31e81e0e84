import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { createFixtureServer } from "./fixture-server.js";
import { redisFromEnv } from "./redis-from-env.js";

// One backend of test/helpers/cluster.ts: the fixture server on the Redis store, as its own
// process. Env: REDIS_URL or REDIS_CLUSTER_NODES (one is required), PORT (0 picks one). Prints `listening <port>` once ready.

const server = createFixtureServer();
server.tool({ name: "whoami" }, () => ({ pid: process.pid }));
server.tool({ name: "notify_tools_changed" }, () => {
  server.notifyToolsListChanged();
  return "notified";
});
server.tool(
  {
    name: "notify_resource_updated",
    input: { type: "object", properties: { uri: { type: "string" } }, required: ["uri"] },
  },
  ({ uri }) => {
    server.notifyResourceUpdated(String(uri));
    return "notified";
  },
);
server.tool(
  {
    name: "paced",
    input: {
      type: "object",
      properties: { n: { type: "integer", maximum: 50 }, ms: { type: "integer", maximum: 1_000 } },
      required: ["n", "ms"],
    },
  },
  async ({ n, ms }, ctx) => {
    for (let tick = 1; tick <= Number(n); tick++) {
      await ctx.log("info", { tick });
      await new Promise((resolve) => setTimeout(resolve, Number(ms)));
    }
    return "paced done";
  },
);
server.tool({ name: "wait_for_cancel" }, async (_args, ctx) => {
  await ctx.log("info", "waiting");
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 30_000);
    ctx.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return ctx.signal.aborted ? "cancelled" : "not cancelled";
});

/** Hangs until the task is cancelled or its process stops. */
function hang(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason)),
  );
}
server.tool({ name: "task_ask", taskSupport: "optional" }, async (_args, ctx) => {
  const answer = await ctx.elicit("go", {
    message: "Go on?",
    requestedSchema: { type: "object", properties: {} },
  });
  return { pid: process.pid, action: String(answer.action) };
});
server.tool({ name: "task_hang", taskSupport: "optional" }, (_args, ctx) => hang(ctx.signal));
server.tool(
  {
    name: "task_idempotent",
    taskSupport: "optional",
    annotations: { idempotentHint: true },
    input: { type: "object", properties: { hangOnPid: { type: "integer" } } },
  },
  async ({ hangOnPid }, ctx) => {
    if (hangOnPid === process.pid) await hang(ctx.signal);
    return { pid: process.pid };
  },
);

const redis = await redisFromEnv("cluster-server");
const store = redisStore({ redis });
const mcp = createMcpHandler(server, {
  secret: "cluster",
  store,
  singleUseState: true,
  // A short lease, so work abandoned by a killed process is noticed within the tests' waits.
  tasks: { leaseMs: 1_500 },
  legacy: { resumeCheckMs: Number(process.env.RESUME_CHECK_MS ?? 10_000) },
});

// The handler subscribes to the change bus as it is created. The store shares one subscriber
// connection, whose replies come in order: once this probe's SUBSCRIBE is confirmed, so is the
// handler's, and a change published by another backend from now on reaches this one.
const unsubscribe = await store.bus.subscribe("cluster-ready", () => undefined);
await unsubscribe();

const httpServer = createServer(toNodeHandler(mcp));
httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(httpServer.address() as AddressInfo).port}\n`);
});

// A rolling-deploy drain, as examples/shared/shutdown.ts does it: new requests get 503 while
// the listener stays open, work in flight gets GRACE_MS, then the process goes.
const graceMs = Number(process.env.GRACE_MS ?? 3_000);
let closing = false;
async function shutdown(code: number): Promise<void> {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(code), graceMs + 3_000).unref();
  await mcp.close({ graceMs }).catch(() => undefined);
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
