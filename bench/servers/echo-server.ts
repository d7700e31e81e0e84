import { McpServer } from "mcp-mount";
import { ECHO_DESCRIPTION } from "./serve.js";

/** Our server with the benchmarks' `echo` tool: JSON Schema input, the text back as one block. */
export function createEchoServer(name: string): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.tool(
    {
      name: "echo",
      description: ECHO_DESCRIPTION,
      input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
    ({ text }) => String(text),
  );
  return server;
}
