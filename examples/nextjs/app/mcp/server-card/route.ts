import { toNextRoute } from "mcp-mount/next";
import { nodeHandler } from "../../../lib/server";

// The Server Card of /mcp (SEP-2127), at the location the text reserves: the MCP handler serves
// it from the request's path. GET (Next.js answers HEAD with it too) and OPTIONS (a page's
// preflight for If-None-Match) of the same handler as the endpoint.
export const { GET, OPTIONS } = toNextRoute(nodeHandler());
