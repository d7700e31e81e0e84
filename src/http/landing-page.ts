import type { Implementation } from "../server/types.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";

/**
 * A person opening the endpoint in a browser: a GET that asks for HTML, not for an event stream,
 * and belongs to no session. MCP clients always send `Accept: text/event-stream` on GET.
 */
export function isBrowserVisit(req: McpHttpRequest): boolean {
  const accept = req.header("accept") ?? "";
  return (
    accept.includes("text/html") &&
    !accept.includes("text/event-stream") &&
    req.header("mcp-session-id") === null
  );
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/**
 * A short page saying what the URL is and how to connect to it. The server's name is shown only
 * when the endpoint is public (`info` given): behind auth, a page must not tell more than a 401.
 */
export function landingPage(
  url: string,
  info: Implementation | undefined,
  allow: string,
): McpHttpResponse {
  const endpoint = escapeHtml(url.split("?")[0]!);
  const name = info ? escapeHtml(info.title ?? info.name) : undefined;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP endpoint</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
<h1>${name ? `${name}: ` : ""}a Model Context Protocol endpoint</h1>
<p>This URL serves <a href="https://modelcontextprotocol.io">MCP</a> over Streamable HTTP, for MCP
clients rather than browsers. Add it to your client as a remote (HTTP) server:</p>
<pre>${endpoint}</pre>
<p>Or look at it from a terminal: <code>npx mcp-mount inspect ${endpoint}</code></p>
</body></html>
`;
  return {
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
      "x-content-type-options": "nosniff",
      allow,
    },
    body: html,
  };
}
