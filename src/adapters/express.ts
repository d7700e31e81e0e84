import type { NextFunction, Request, Response } from "express";
import type { McpHandler } from "../http/handler.js";
import { toNodeHandler } from "./node.js";

/**
 * Express middleware (Express 4 and 5) serving the MCP endpoint at the path it is mounted on:
 * `app.use("/mcp", toExpress(mcp))`. Works whether or not `express.json()` ran first.
 */
export function toExpress(
  mcp: McpHandler,
): (req: Request, res: Response, next: NextFunction) => void {
  const handle = toNodeHandler(mcp);
  return (req, res, next) => {
    // Only the mount path itself is the endpoint; deeper paths belong to the app.
    if (req.path !== "/" && req.path !== "") return next();
    handle(req, res).catch(next);
  };
}
