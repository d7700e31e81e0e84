import { createMcpHandler, McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { listen } from "./listen.js";

// This package on node:http: its main entry and its Node adapter, with the echo tool.
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
listen(
  toNodeHandler(createMcpHandler(server, { secret: "cold-secret-0123456789abcdef" })),
  importedMs,
);
