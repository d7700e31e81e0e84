import express from "express";
import { createMcpHandler, McpServer } from "mcp-mount";
import { toExpress } from "mcp-mount/express";
import { listen } from "./listen.js";

// The cold start: this package's main entry and its Express adapter, as the README
// mounts them, with the benchmarks' echo tool (a JSON Schema input).
const importedMs = performance.now();
const server = new McpServer({ name: "cold-mcp-mount", version: "1.0.0" });
server.tool(
  {
    name: "echo",
    description: "Returns the text it is given",
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  ({ text }) => String(text),
);
const app = express();
app.use("/mcp", toExpress(createMcpHandler(server, { secret: "cold-secret-0123456789abcdef" })));
listen(app, importedMs);
