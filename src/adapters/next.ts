import type { McpHandler } from "../http/handler.js";

/** A Next.js App Router route handler (Node.js or edge runtime). */
export type NextRouteHandler = (request: Request) => Promise<Response>;

/** Route handlers for `app/mcp/route.ts`: `export const { GET, POST, DELETE } = toNextRoute(mcp)`. */
export function toNextRoute(mcp: McpHandler): {
  GET: NextRouteHandler;
  POST: NextRouteHandler;
  DELETE: NextRouteHandler;
  OPTIONS: NextRouteHandler;
} {
  const handler: NextRouteHandler = (request) => mcp.fetch(request);
  return { GET: handler, POST: handler, DELETE: handler, OPTIONS: handler };
}
