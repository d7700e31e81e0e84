import cluster from "node:cluster";
import { createServer } from "node:http";
import express from "express";
import { createExampleApp } from "../express/app.js";
import { storeFromEnv } from "../shared/env.js";
import { closeOnSignal } from "../shared/shutdown.js";

// One worker of examples/cluster/server.ts: the Express example app on the shared Redis store.
// The primary passes the Redis it names (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS),
// MCP_SECRET, PORT and HOST.

const { store, close: closeStore } = await storeFromEnv();
if (!store) throw new Error("worker: the primary names no Redis");
const { app, mcp } = createExampleApp({ secret: process.env.MCP_SECRET, store });

// Says which worker answered, to watch requests spread over the processes.
const servedBy = `worker ${cluster.worker?.id ?? "?"} (pid ${process.pid})`;
const front = express();
front.use((_req, res, next) => {
  res.setHeader("x-served-by", servedBy);
  next();
});
front.use(app);

// Workers share the port: the primary holds the socket and hands connections out.
const httpServer = createServer(front);
httpServer.once("error", (error) => {
  console.error(`${servedBy}: ${error.message}`);
  process.exit(1);
});
httpServer.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? "127.0.0.1");

// Ctrl+C sends SIGINT to every process of the terminal's group; the primary sends SIGTERM.
closeOnSignal(httpServer, async (graceMs) => {
  await mcp.close({ graceMs });
  await closeStore();
});
