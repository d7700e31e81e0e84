import type { McpHandler } from "../http/handler.js";
import type { FetchOptions } from "../http/web.js";

/** A Next.js App Router route handler (Node.js or edge runtime). */
export type NextRouteHandler = (request: Request) => Promise<Response>;

const LOOPBACK_LITERAL = /^https?:\/\/(127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/;

/**
 * What a route can tell of its socket, which Next does not expose: `request.url` names
 * `localhost` whatever the bind address (vercel/next.js#37536). `next start` and `next dev`
 * record the address they listen on in `__NEXT_PRIVATE_ORIGIN` (both runtimes see it): a loopback
 * IP literal there is the `-H` address. `next dev` counts as loopback too, as Vite's dev server
 * does: a development server is what DNS rebinding attacks reach. Either way the Host check of
 * `node:http` applies. Elsewhere (serverless hosts) nothing is known and nothing is assumed.
 */
function socketOf(): FetchOptions | undefined {
  if (typeof process === "undefined" || !process.env) return undefined;
  const match = LOOPBACK_LITERAL.exec(process.env.__NEXT_PRIVATE_ORIGIN ?? "");
  if (match) return { localAddress: match[1]!.replace(/^\[|\]$/g, "") };
  if (process.env.NODE_ENV === "development") return { localAddress: "127.0.0.1" };
  return undefined;
}

/**
 * Route handlers for `app/mcp/route.ts`: `export const { GET, POST, DELETE } = toNextRoute(mcp)`.
 *
 * @example
 * ```ts
 * // app/mcp/route.ts
 * import { toNextRoute } from "mcp-mount/next";
 * import { mcp } from "../../lib/mcp";
 * export const { GET, POST, DELETE } = toNextRoute(mcp);
 * ```
 */
export function toNextRoute(mcp: McpHandler): {
  GET: NextRouteHandler;
  POST: NextRouteHandler;
  DELETE: NextRouteHandler;
  OPTIONS: NextRouteHandler;
} {
  // Read on the first request: Next sets the variable once it listens, after loading modules.
  let socket: FetchOptions | undefined | null = null;
  const handler: NextRouteHandler = (request) => {
    if (socket === null) socket = socketOf();
    return mcp.fetch(request, socket);
  };
  return { GET: handler, POST: handler, DELETE: handler, OPTIONS: handler };
}
