import { createMcpHandler } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { storeFromEnv } from "../../examples/shared/env.js";
import { createEchoServer } from "../servers/echo-server.js";
import { serveForMemoryReads } from "../servers/memory-child.js";

// The process whose memory per idle stream bench/capacity.ts reads: bench/servers/scale.ts's
// server (the built package on node:http, the Redis store on REDIS_URL), forked with
// --expose-gc. Sends its port over IPC once listening; answers "heap" with heap, external
// memory and RSS after forced GCs; exits when its parent disconnects.

export type { HeapMessage as MemoryMessage } from "../servers/memory-child.js";

const { store } = await storeFromEnv();
const mcp = createMcpHandler(createEchoServer("bench-capacity"), {
  secret: "bench-secret-0123456789abcdef",
  store,
  maxStreams: 100_000,
  maxStreamsPerClient: 100_000,
  legacy: { maxSessionsPerClient: 100_000 },
});
await mcp.ready;

serveForMemoryReads(toNodeHandler(mcp));
