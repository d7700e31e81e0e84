import { createMcpHandler, type McpHandler, McpServer } from "mcp-mount";

/** What `app/context/mcp` reads from each request's own headers: the handlers' `ctx.app`. */
export interface RouteContext {
  /** The caller's `X-Request-Id`, or null without one. */
  requestId: string | null;
  /** The caller's `User-Agent`, or null without one. */
  userAgent: string | null;
}

/** An endpoint whose one tool, `request_info`, answers with what the route read from the request. */
export function createContextHandler(): McpHandler<RouteContext> {
  const server = new McpServer<RouteContext>({
    name: "mcp-mount-nextjs-context",
    version: "0.1.0",
  });
  server.tool(
    {
      name: "request_info",
      description: "The request id and user agent this call's own HTTP request carried",
      annotations: { readOnlyHint: true },
    },
    (_args, ctx) => ({ requestId: ctx.app.requestId, userAgent: ctx.app.userAgent }),
  );
  return createMcpHandler(server, { secret: process.env.MCP_SECRET });
}
