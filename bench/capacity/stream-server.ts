import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { storeFromEnv } from "../../examples/shared/env.js";
import { createEchoServer } from "../servers/echo-server.js";

// The process whose memory per idle stream bench/capacity.ts reads: bench/servers/scale.ts's
// server (the built package on node:http, the Redis store on REDIS_URL), forked with
// --expose-gc. Sends its port over IPC once listening; answers "heap" with heap, external
// memory and RSS after forced GCs; exits when its parent disconnects.

/** What the parent reads. */
export interface MemoryMessage {
  heapUsed: number;
  external: number;
  rss: number;
}

const { store } = await storeFromEnv();
const mcp = createMcpHandler(createEchoServer("bench-capacity"), {
  secret: "bench-secret-0123456789abcdef",
  store,
  maxStreams: 100_000,
  maxStreamsPerClient: 100_000,
  legacy: { maxSessionsPerClient: 100_000 },
});
await mcp.ready;

const server = createServer(toNodeHandler(mcp));
server.keepAliveTimeout = 600_000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});

process.on("message", async (message) => {
  if (message !== "heap") return;
  for (let i = 0; i < 6; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  process.send?.({ heapUsed, external, rss } satisfies MemoryMessage);
});
process.on("disconnect", () => process.exit(0));
