import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

// The official SDK v2's pieces as bench/servers/sdk.ts uses them: createMcpHandler with a
// per-request server factory, the echo tool with a zod input, and toNodeHandler. Exported for
// the node:http and Express children, which import it before taking the import time.
export function sdkListener() {
  const input = z.object({ text: z.string() });
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "cold-sdk", version: "1.0.0" });
    server.registerTool(
      "echo",
      { description: "Returns the text it is given", inputSchema: input },
      ({ text }) => ({ content: [{ type: "text", text }] }),
    );
    return server;
  });
  return toNodeHandler(handler);
}
