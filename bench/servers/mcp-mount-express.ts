import express from "express";
import { createMcpHandler } from "mcp-mount";
import { toExpress } from "mcp-mount/express";
import { createEchoServer } from "./echo-server.js";
import { serve } from "./serve.js";

// This package as the README mounts it on Express 5, from the built dist; BENCH_EXPRESS_JSON=1
// puts express.json() in front, as an app that parses JSON for its other routes would.
const server = createEchoServer("bench-mcp-mount-express");
const mcp = createMcpHandler(server, { secret: "bench-secret-0123456789abcdef" });

const app = express();
if (process.env.BENCH_EXPRESS_JSON === "1") app.use(express.json());
app.use("/mcp", toExpress(mcp));
serve(app);
