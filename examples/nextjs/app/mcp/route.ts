import { toNextRoute } from "mcp-mount/next";
import { nodeHandler } from "../../lib/server";

export const { GET, POST, DELETE, OPTIONS } = toNextRoute(nodeHandler());
