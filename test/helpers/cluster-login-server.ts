import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { redisStore } from "../../src/store/redis.js";
import { createLoginHandler, mountCookieLogin } from "./cookie-login.js";
import { redisFromEnv } from "./redis-from-env.js";

// One backend of test/cluster/app-login.test.ts: the cookie-login Express app
// (test/helpers/cookie-login.ts) on the Redis store, as its own process. Env: REDIS_URL (or
// REDIS_CLUSTER_NODES) and
// COOKIE_SECRET (required; every backend gets the same, so each verifies any backend's cookie),
// PORT (0 picks one). Prints `listening <port>` once ready.

const { COOKIE_SECRET: cookieSecret } = process.env;
if (!cookieSecret) throw new Error("cluster-login-server: COOKIE_SECRET is required");

// As in cluster-server.ts: fail fast while Redis is down, and wait until it is ready.
const redis = await redisFromEnv("cluster-login-server");
const store = redisStore({ redis });
const mcp = createLoginHandler({ store, singleUseState: true });

// Once this probe's SUBSCRIBE is confirmed on the store's shared subscriber, so is the handler's.
const unsubscribe = await store.bus.subscribe("cluster-ready", () => undefined);
await unsubscribe();

const app = express();
mountCookieLogin(app, mcp, cookieSecret);
const httpServer = createServer(app);
httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(httpServer.address() as AddressInfo).port}\n`);
});

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(0), 5_000).unref();
  await mcp.close({ graceMs: 1_000 }).catch(() => undefined);
  httpServer.close(() => {
    redis.disconnect();
    process.exit(0);
  });
  httpServer.closeAllConnections();
}
process.once("SIGTERM", () => void shutdown());
process.once("SIGINT", () => void shutdown());
// The harness holds our stdin open: when it goes away, however it died, so do we.
process.stdin.on("end", () => void shutdown()).resume();
