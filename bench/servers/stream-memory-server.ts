import type { RequestListener } from "node:http";
import express from "express";
import { createMcpHandler } from "mcp-mount";
import { toExpress } from "mcp-mount/express";
import { toNodeHandler } from "mcp-mount/node";
import { createEchoServer } from "./echo-server.js";
import { serveForMemoryReads } from "./memory-child.js";

// One server of bench/stream-memory.ts, run with --expose-gc: BENCH_SERVER=bare holds plain
// node:http SSE responses (what Node's socket, parser, request and response cost), =mcp-mount
// serves the package (memory store, limits raised so one loopback client may hold them all);
// BENCH_HOST=express mounts either at app.use("/mcp", …) of an Express 5 app instead.
// Answers "heap" over IPC with the heap after forced GCs, and RSS.

export type { HeapMessage } from "./memory-child.js";

const bare: RequestListener = (req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write("data: \n\n");
};

function mount(onExpress: boolean): RequestListener {
  const mcp = createMcpHandler(createEchoServer("bench-stream-memory"), {
    secret: "bench-secret-0123456789abcdef",
    maxStreams: 100_000,
    maxStreamsPerClient: 100_000,
    legacy: { maxSessionsPerClient: 100_000 },
  });
  if (onExpress) return express().use("/mcp", toExpress(mcp));
  const handle = toNodeHandler(mcp);
  return (req, res) => void handle(req, res);
}

const onExpress = process.env.BENCH_HOST === "express";
const listener =
  process.env.BENCH_SERVER !== "bare"
    ? mount(onExpress)
    : onExpress
      ? express().use("/mcp", bare)
      : bare;
serveForMemoryReads(listener);
