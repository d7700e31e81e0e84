import {
  localhostHostValidation,
  localhostOriginValidation,
  toNodeHandler,
} from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// The official SDK v2 as its READMEs serve 2026-07-28 over node:http: createMcpHandler with a
// per-request server factory, toNodeHandler, and the Host/Origin guards in front.
const input = z.object({ text: z.string() });

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "bench-sdk", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: ECHO_DESCRIPTION, inputSchema: input },
    ({ text }) => ({
      content: [{ type: "text", text }],
    }),
  );
  return server;
});
const node = toNodeHandler(handler);
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();

serve((req, res) => {
  if (!validateHost(req, res) || !validateOrigin(req, res)) return;
  void node(req, res);
});
