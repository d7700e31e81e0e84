import type { NextFunction, Request, Response } from "express";
import { WELL_KNOWN_DISCOVERY } from "../http/discovery/serve.js";
import type { McpHandler } from "../http/handler.js";
import { type NodeHandlerOptions, toNodeHandler } from "./node.js";
import { shareShape } from "./shared-shape.js";

/** Where RFC 9728 §3 puts Protected Resource Metadata. */
const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** Whether `url` (req.url inside a mounted middleware) is the mount path itself. */
function isMountRoot(url: string): boolean {
  return url === "/" || url === "" || url.charCodeAt(1) === 63 /* "/?" */;
}

/** Whether `url` (req.url inside a mounted middleware) is the endpoint's Server Card. */
function isServerCard(url: string): boolean {
  return url === "/server-card" || url.startsWith("/server-card?");
}

/**
 * Whether `req` asks for a stream that stays open until the client leaves: a legacy GET stream,
 * or a modern `subscriptions/listen` or `events/stream`, whose `Mcp-Method` header the endpoint
 * requires.
 */
function opensLongStream(req: Request): boolean {
  const method = req.headers["mcp-method"];
  return req.method === "GET" || method === "subscriptions/listen" || method === "events/stream";
}

/** Options of {@link toExpress}. */
export interface ExpressOptions<App = unknown> {
  /**
   * The app's context for a request, from what earlier middleware found (`req.user`,
   * `req.session`, `res.locals`), reaching handlers as `ctx.app`; called once per HTTP request,
   * may be async. A throw answers 500 with a JSON-RPC body and goes to `onError`.
   */
  context?: (req: Request, res: Response) => App | Promise<App>;
}

/**
 * Express middleware (Express 4 and 5) serving the MCP endpoint at the path it is mounted on:
 * `app.use("/mcp", toExpress(mcp))`, and its Server Card at `/mcp/server-card` (unless
 * `serverCard` is off). Works whether or not `express.json()` ran first.
 *
 * @example
 * ```ts
 * import express from "express";
 * import { createMcpHandler, McpServer } from "mcp-mount";
 * import { toExpress } from "mcp-mount/express";
 *
 * const mcp = createMcpHandler(new McpServer({ name: "notes", version: "1.0.0" }));
 * const app = express();
 * app.use("/mcp", toExpress(mcp, { context: (_req, res) => ({ user: res.locals.user }) }));
 * app.listen(3000);
 * ```
 */
export function toExpress<App = unknown>(
  mcp: McpHandler<App>,
  options: ExpressOptions<App> = {},
): (req: Request, res: Response, next: NextFunction) => void {
  const handle = toNodeHandler(mcp, options as NodeHandlerOptions<App>);
  return (req, res, next) => {
    // Only the mount path itself is the endpoint; deeper paths belong to the app. Express has
    // cut the mount path from req.url; reading it spares req.path's URL parse on every request.
    if (!isMountRoot(req.url) && !(mcp.servesServerCard && isServerCard(req.url))) return next();
    // Express leaves each request's req and res with a shape of their own: every later access
    // to them would miss V8's caches (see shareShape). Not for a long-lived stream, which may
    // stay open for hours: there the dictionaries would hold 2 KB more than the shapes do.
    if (!opensLongStream(req)) {
      shareShape(req);
      shareShape(res);
    }
    handle(req, res).catch(next);
  };
}

/**
 * Express middleware serving the endpoint's documents at the site's root: its Protected Resource
 * Metadata (RFC 9728) at `/.well-known/oauth-protected-resource[/<path>]`, and with `serverCard`
 * the AI Catalog at `/.well-known/ai-catalog.json` and the card at
 * `/.well-known/mcp/server-card.json`: `app.use(toExpressMetadata(mcp))`, at the app's root.
 * Other requests pass through.
 *
 * @example
 * ```ts
 * import { toExpress, toExpressMetadata } from "mcp-mount/express";
 *
 * app.use(toExpressMetadata(mcp)); // serves /.well-known/oauth-protected-resource/mcp
 * app.use("/mcp", toExpress(mcp));
 * ```
 */
export function toExpressMetadata<App = unknown>(
  mcp: McpHandler<App>,
): (req: Request, res: Response, next: NextFunction) => void {
  const handle = toNodeHandler(mcp);
  return (req, res, next) => {
    const path = (req.originalUrl ?? req.url).split("?")[0]!;
    const discovery = mcp.servesServerCard && WELL_KNOWN_DISCOVERY.has(path);
    if (!discovery && path !== WELL_KNOWN && !path.startsWith(`${WELL_KNOWN}/`)) return next();
    handle(req, res).catch(next);
  };
}
