import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { registerConformanceFixtures } from "./fixtures.js";

// The conformance server: `npm run build && npm run conformance:server`, then point the
// conformance CLI at the printed URL. PORT=0 picks a free port.
const port = Number(process.env.PORT ?? 3001);
const host = "127.0.0.1";

const server = registerConformanceFixtures(
  new McpServer({ name: "mcp-mount-conformance", version: "1.0.0" }),
);
const mcp = createMcpHandler(server, {
  // A fixed development secret, so every run seals requestState the same way.
  secret: process.env.MCP_SECRET ?? "mcp-mount-conformance-dev-secret",
});
const listener = toNodeHandler(mcp);
const httpServer = createServer((req, res) => {
  if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") {
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found: the endpoint is /mcp\n");
    return;
  }
  void listener(req, res);
});

httpServer.listen(port, host, () => {
  const { port: bound } = httpServer.address() as AddressInfo;
  console.log(`MCP conformance server listening on http://${host}:${bound}/mcp`);
});

const shutdown = async () => {
  await mcp.close();
  httpServer.close(() => process.exit(0));
  httpServer.closeAllConnections();
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
