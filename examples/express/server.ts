import type { AddressInfo } from "node:net";
import { corsOriginsFromEnv, secretFromEnv, storeFromEnv } from "../shared/env.js";
import { closeOnSignal } from "../shared/shutdown.js";
import { createExampleApp } from "./app.js";

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";

const secret = secretFromEnv("mcp-mount-example-dev-secret");

const { store, close: closeStore } = await storeFromEnv();

// MCP_CORS_ORIGINS lists the pages that may call from other origins; the tools' X-Request-Id
// header (see whoami) is allowed for them too.
const allowedOrigins = corsOriginsFromEnv();
const { app, mcp } = createExampleApp({
  secret,
  store,
  allowedOrigins,
  cors: { allowedHeaders: ["X-Request-Id"] },
});

const httpServer = app.listen(port, host, (error?: Error) => {
  // Express 5 calls back with the listen error (a port in use, say) too.
  if (error) {
    console.error(`Cannot listen on ${host}:${port}: ${error.message}`);
    process.exit(1);
  }
  // The port actually bound: PORT=0 asks the system for a free one.
  const url = `http://${host}:${(httpServer.address() as AddressInfo).port}/mcp`;
  console.log(`MCP server listening on ${url}${store ? " (Redis store)" : ""}`);
  if (allowedOrigins) console.log(`Browser pages allowed (CORS): ${allowedOrigins.join(", ")}`);
  console.log("Try it:");
  console.log(
    `  curl -s ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: echo' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`,
  );
});

closeOnSignal(httpServer, async (graceMs) => {
  await mcp.close({ graceMs });
  await closeStore();
});
