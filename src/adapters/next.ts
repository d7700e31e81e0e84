import type { McpHandler } from "../http/handler.js";
import type { FetchOptions } from "../http/web.js";

/** A Next.js App Router route handler (Node.js or edge runtime). */
export type NextRouteHandler = (request: Request) => Promise<Response>;

// Not [::1]: Next writes it for `-H ::` too, which listens on every interface.
const LOOPBACK_LITERAL = /^https?:\/\/(127(?:\.\d{1,3}){3})(?::\d+)?$/;

/**
 * What a route can tell of its socket, which Next does not expose: `request.url` names
 * `localhost` whatever the bind address (vercel/next.js#37536). `next start` and `next dev`
 * record the address they listen on in `__NEXT_PRIVATE_ORIGIN` (both runtimes see it): a 127.x
 * literal there is the `-H` address. `next dev` counts as loopback too, as Vite's dev server
 * does: a development server is what DNS rebinding attacks reach. Either way the Host check of
 * `node:http` applies. Elsewhere (serverless hosts) nothing is known and nothing is assumed.
 */
function socketOf(): FetchOptions | undefined {
  if (typeof process === "undefined" || !process.env) return undefined;
  const match = LOOPBACK_LITERAL.exec(process.env.__NEXT_PRIVATE_ORIGIN ?? "");
  if (match) return { localAddress: match[1]! };
  if (process.env.NODE_ENV === "development") return { localAddress: "127.0.0.1" };
  return undefined;
}

/** Options of {@link toNextRoute}. */
export interface NextRouteOptions<App = unknown> {
  /**
   * The app's context for a request (its session, from `auth()` or cookies; headers such as a
   * request id), reaching handlers as `ctx.app`; called once per HTTP request, may be async. A
   * throw answers 500 with a JSON-RPC body and goes to `onError`.
   */
  context?: (request: Request) => App | Promise<App>;
}

/**
 * Route handlers for `app/mcp/route.ts`: `export const { GET, POST, DELETE, OPTIONS } =
 * toNextRoute(mcp)`. Export `OPTIONS` for browser clients on other origins: without it Next.js
 * answers their CORS preflight itself, with no CORS headers.
 *
 * @example
 * ```ts
 * // app/mcp/route.ts
 * import { createMcpHandler, McpServer } from "mcp-mount";
 * import { toNextRoute } from "mcp-mount/next";
 *
 * const server = new McpServer({ name: "notes", version: "1.0.0" });
 * export const { GET, POST, DELETE, OPTIONS } = toNextRoute(createMcpHandler(server));
 * ```
 */
export function toNextRoute<App = unknown>(
  mcp: McpHandler<App>,
  options: NextRouteOptions<App> = {},
): {
  GET: NextRouteHandler;
  POST: NextRouteHandler;
  DELETE: NextRouteHandler;
  OPTIONS: NextRouteHandler;
} {
  const { context } = options;
  // Read on the first request: Next sets the variable once it listens, after loading modules.
  let socket: FetchOptions | undefined | null = null;
  const handler: NextRouteHandler = (request) => {
    if (socket === null) socket = socketOf();
    if (!context) return mcp.fetch(request, socket as FetchOptions<App> | undefined);
    return mcp.fetch(request, { ...socket, context: () => context(request) });
  };
  return { GET: handler, POST: handler, DELETE: handler, OPTIONS: handler };
}
