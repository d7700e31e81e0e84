import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { corsOriginsFromEnv, secretFromEnv, storeFromEnv } from "../shared/env.js";
import { closeOnSignal } from "../shared/shutdown.js";
import { registerConformanceFixtures } from "./fixtures.js";

// The conformance server: `npm run build && npm run conformance:server`, then point the
// conformance CLI at the printed URL. PORT=0 picks a free port; REDIS_URL puts the store in Redis;
// MCP_CORS_ORIGINS (comma-separated) lets browser pages on those origins call it (CORS).
const port = Number(process.env.PORT ?? 3001);
const host = "127.0.0.1";

const secret = secretFromEnv("mcp-mount-conformance-dev-secret");

const { store, close: closeStore } = await storeFromEnv();

const server = await registerConformanceFixtures(
  new McpServer({ name: "mcp-mount-conformance", version: "1.0.0" }),
);
const mcp = createMcpHandler(server, { secret, store, allowedOrigins: corsOriginsFromEnv() });
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

closeOnSignal(httpServer, async (graceMs) => {
  await mcp.close({ graceMs });
  await closeStore();
});
