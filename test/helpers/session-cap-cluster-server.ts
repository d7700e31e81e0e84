import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { bearerAuth } from "../../src/auth/index.js";
import { createMcpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { createFixtureServer } from "./fixture-server.js";
import { redisFromEnv } from "./redis-from-env.js";

// One backend of test/cluster/session-cap.test.ts: the fixture server on the Redis store, whose
// callers are told apart by their bearer token (the token is the subject), with a small
// maxSessionsPerClient. Env: REDIS_URL or REDIS_CLUSTER_NODES, PORT, MAX_SESSIONS_PER_CLIENT.
// Prints `listening <port>` once ready.

const redis = await redisFromEnv("session-cap-cluster-server");
const mcp = createMcpHandler(createFixtureServer(), {
  secret: "session-cap",
  store: redisStore({ redis }),
  auth: bearerAuth({
    authorizationServers: ["https://auth.example.com"],
    verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
  }),
  legacy: { maxSessionsPerClient: Number(process.env.MAX_SESSIONS_PER_CLIENT ?? 4) },
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
process.stdin.on("end", () => void shutdown()).resume();
