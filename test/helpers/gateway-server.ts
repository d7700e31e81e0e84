import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { proxyServer, stdioUpstream } from "../../src/gateway/index.js";
import { createMcpHandler, type McpStore, memoryStore } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { UPSTREAM_COMMANDS } from "./gateway-process.js";
import { redisFromEnv } from "./redis-from-env.js";

// One gateway process: an upstream stdio program served through proxyServer and
// createMcpHandler over node:http, as a backend of test/helpers/cluster.ts or on its own.
// Env: GATEWAY_UPSTREAM "everything" (the official server-everything, the default) or "test"
// (test/helpers/gateway-fleet-upstream.ts, which has a crash tool); REDIS_URL or
// REDIS_CLUSTER_NODES for the Redis store (else the memory store); GATEWAY_SCOPE; PORT (0 picks
// one). Prints `listening <port>` once ready, and each upstream stderr line prefixed.

const choice = process.env.GATEWAY_UPSTREAM ?? "everything";
if (choice !== "everything" && choice !== "test")
  throw new Error(`GATEWAY_UPSTREAM ${choice} is neither "everything" nor "test"`);
const command = UPSTREAM_COMMANDS[choice];

/**
 * server-everything asks its client for roots 350 ms after `initialize`, outside any call; the
 * gateway gives such a request to a call in flight, if exactly one is (see
 * test/gateway/everything-roots.test.ts). This resolves once it has asked (it logs the
 * gateway's refusal to stderr), so the fleet's tests of other things start after it.
 */
let asked: () => void = () => undefined;
const rootsAsked = new Promise<void>((resolve) => (asked = resolve));

const scope = (process.env.GATEWAY_SCOPE ?? "process") as "process" | "session" | "principal";
const upstream = stdioUpstream({
  ...command,
  scope,
  // Quick restarts: the crash test waits for the next child.
  restart: { initialMs: 50, maxMs: 1_000 },
  onStderr: (line) => {
    if (line.startsWith("Failed to request roots")) asked();
    process.stderr.write(`[upstream] ${line}\n`);
  },
});
const server = await proxyServer(upstream, {
  inputTimeoutMs: Number(process.env.GATEWAY_INPUT_TIMEOUT_MS ?? 60_000),
});

const useRedis = Boolean(process.env.REDIS_URL || process.env.REDIS_CLUSTER_NODES);
const redis = useRedis ? await redisFromEnv("gateway-server") : undefined;
const store: McpStore = redis ? redisStore({ redis }) : memoryStore();
// Every process seals requestState with the same secret, so any of them can open a round
// another one started.
const mcp = createMcpHandler(server, { secret: "gateway-fleet", store });

if (redis) {
  // The store shares one subscriber connection whose replies come in order: once this probe's
  // SUBSCRIBE is confirmed, so is the handler's (as test/helpers/cluster-server.ts does).
  const unsubscribe = await store.bus.subscribe("gateway-ready", () => undefined);
  await unsubscribe();
}

if (choice === "everything" && scope === "process") await rootsAsked;

const httpServer = createServer(toNodeHandler(mcp));
httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(httpServer.address() as AddressInfo).port}\n`);
});

// A drain as a deployment does it: new requests get 503, work in flight gets GRACE_MS, then
// the upstream child is stopped and the process goes.
const graceMs = Number(process.env.GRACE_MS ?? 3_000);
let closing = false;
async function shutdown(code: number): Promise<void> {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(code), graceMs * 2 + 3_000).unref();
  await mcp.close({ graceMs }).catch(() => undefined);
  await upstream.close(graceMs).catch(() => undefined);
  httpServer.close(() => {
    redis?.disconnect();
    process.exit(code);
  });
  httpServer.closeIdleConnections();
  setTimeout(() => httpServer.closeAllConnections(), 500).unref();
}
process.once("SIGTERM", () => void shutdown(0));
process.once("SIGINT", () => void shutdown(0));
// The harness holds our stdin open: when it goes away, however it died, so do we.
process.stdin.on("end", () => void shutdown(0)).resume();
