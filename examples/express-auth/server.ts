import type { AddressInfo } from "node:net";
import { secretFromEnv } from "../shared/env.js";
import { startLocalIssuer } from "../shared/local-issuer.js";
import { closeOnSignal } from "../shared/shutdown.js";
import { createAuthExampleApp, SCOPES } from "./app.js";

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? "127.0.0.1";

// A stand-in authorization server on loopback; point `issuer` and `jwksUrl` at a real one in production.
const issuer = await startLocalIssuer({
  port: Number(process.env.ISSUER_PORT ?? 0),
  scopes: SCOPES,
});
const { app, mcp } = createAuthExampleApp({
  issuer: issuer.url,
  jwksUrl: issuer.jwksUrl,
  secret: secretFromEnv("mcp-mount-auth-example-dev-secret"),
});

const httpServer = app.listen(port, host, () => {
  const url = `http://${host}:${(httpServer.address() as AddressInfo).port}/mcp`;
  const metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
  console.log(`MCP server listening on ${url} (JWT auth)`);
  console.log(`Protected Resource Metadata: ${metadata}`);
  console.log(`Local issuer: ${issuer.url} (grants client_credentials tokens to anyone)`);
  console.log("Get a token and call a protected tool:");
  console.log(`  TOKEN=$(curl -s ${issuer.url}/token -d grant_type=client_credentials -d client_id=newcomer \\
    --data-urlencode resource=${url} --data-urlencode 'scope=notes:read notes:write' \\
    | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).access_token') && \\
  curl -s ${url} -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
    -H 'accept: application/json, text/event-stream' -H 'mcp-protocol-version: 2026-07-28' \\
    -H 'mcp-method: tools/call' -H 'mcp-name: add_note' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_note","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`);
});

closeOnSignal(httpServer, async (graceMs) => {
  await mcp.close({ graceMs });
  await issuer.close();
});
