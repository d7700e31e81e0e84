import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { createMcpHandler, type McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";

const HOST_ENTRY = fileURLToPath(new URL("../browser/apps-host/host.ts", import.meta.url));

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>MCP Apps test host</title></head>
<body style="font-family: system-ui, sans-serif; margin: 16px">
<h1 style="font-size: 18px">mcp-mount test host</h1>
<p id="status">starting</p>
<script type="module" src="/host.js"></script>
</body></html>`;

/** The host page's script: test/browser/apps-host/host.ts and what it imports, for browsers. */
export async function bundleHost(): Promise<string> {
  const result = await build({
    entryPoints: [HOST_ENTRY],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/** A running host: the page at `/`, its script, and the MCP endpoint at `/mcp`, one origin. */
export interface AppsHost {
  url: string;
  close(): Promise<void>;
}

/** Serves `server` at /mcp and the host page around it, on 127.0.0.1 and a free port. */
export async function startAppsHost(server: McpServer): Promise<AppsHost> {
  const script = await bundleHost();
  const mcp = createMcpHandler(server, { secret: "apps-host-tests" });
  const endpoint = toNodeHandler(mcp);
  const http: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path === "/mcp") return void endpoint(req, res);
    if (path === "/host.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(script);
      return;
    }
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      await mcp.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
