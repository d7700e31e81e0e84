import { toNextRoute } from "mcp-mount/next";
import { nodeHandler } from "../../../../lib/server";

// The card again where earlier drafts of SEP-2127 put it, for the clients that still look there.
export const { GET, OPTIONS } = toNextRoute(nodeHandler());
