import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { storeFromEnv } from "../../examples/shared/env.js";
import { createEchoServer } from "./echo-server.js";

// One process of the scale-out benchmarks, started by test/helpers/cluster.ts: the built package
// on node:http with the echo tool and `notify_tools_changed`, which announces a tools list change
// to every process. The Redis store on REDIS_URL as the examples connect it, or the memory store
// with BENCH_STORE=memory (the harness always sets REDIS_URL). Prints `listening <port>` once it
// hears the changes other processes publish. The harness ends it with SIGTERM: exiting normally
// lets `--cpu-prof` write its profile (BENCH_CPU_PROF_DIR).

const server = createEchoServer("bench-scale");
server.tool({ name: "notify_tools_changed" }, () => {
  server.notifyToolsListChanged();
  return "notified";
});

if (process.env.BENCH_STORE === "memory") delete process.env.REDIS_URL;
const { store } = await storeFromEnv();
// The load comes from one loopback client: the per-client limits would refuse most of it.
const mcp = createMcpHandler(server, {
  secret: "bench-secret-0123456789abcdef",
  store,
  maxStreams: 100_000,
  maxStreamsPerClient: 100_000,
  legacy: { maxSessionsPerClient: 100_000 },
});
await mcp.ready;

const httpServer = createServer(toNodeHandler(mcp));
httpServer.keepAliveTimeout = 30_000;
httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${(httpServer.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => process.exit(0));
