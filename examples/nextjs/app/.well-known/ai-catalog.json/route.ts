import { toNextRoute } from "mcp-mount/next";
import { nodeHandler } from "../../../lib/server";

// The AI Catalog, where domain-level discovery starts: one entry pointing to /mcp/server-card
// (the handler's `serverCard.endpoint` defaults to /mcp, where app/mcp serves it).
export const { GET, OPTIONS } = toNextRoute(nodeHandler());
