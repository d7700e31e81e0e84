import { createRequestListener } from "@remix-run/node-fetch-server";
import { ValibotJsonSchemaAdapter } from "@tmcp/adapter-valibot";
import { HttpTransport } from "@tmcp/transport-http";
import { McpServer } from "tmcp";
import * as v from "valibot";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// tmcp as its READMEs serve it over node:http: HttpTransport behind @remix-run/node-fetch-server,
// with the valibot adapter.
const server = new McpServer(
  { name: "bench-tmcp", version: "1.0.0", description: "tmcp benchmark server" },
  { adapter: new ValibotJsonSchemaAdapter(), capabilities: { tools: {} } },
);
server.tool(
  { name: "echo", description: ECHO_DESCRIPTION, schema: v.object({ text: v.string() }) },
  ({ text }) => ({ content: [{ type: "text", text }] }),
);
const transport = new HttpTransport(server, { path: "/mcp" });

serve(
  createRequestListener(
    async (request) => (await transport.respond(request)) ?? new Response(null, { status: 404 }),
  ),
);
