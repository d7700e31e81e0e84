import { createMcpHandler, McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// This package as the README mounts it on node:http, from the built dist.
const server = new McpServer({ name: "bench-mcp-mount", version: "1.0.0" });
server.tool(
  {
    name: "echo",
    description: ECHO_DESCRIPTION,
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  ({ text }) => String(text),
);

serve(toNodeHandler(createMcpHandler(server, { secret: "bench-secret-0123456789abcdef" })));
