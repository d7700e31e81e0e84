import { toNextRoute } from "mcp-mount/next";
import { createExampleHandler } from "../../../lib/server";

// The same endpoint as it is deployed behind a reverse proxy that terminates TLS for
// mcp.example.com: the proxy's X-Forwarded-Host and -Proto are believed (one hop), and only
// that public name is served.
export const { GET, POST, DELETE, OPTIONS } = toNextRoute(
  createExampleHandler("nodejs", { trustProxy: true, allowedHosts: ["mcp.example.com"] }),
);
