import { toNextRoute } from "mcp-mount/next";
import { createContextHandler } from "../../../lib/context";

// Read again for every HTTP request (a retry or a legacy reply has its own), then handed to
// every handler as `ctx.app`.
export const { GET, POST, DELETE, OPTIONS } = toNextRoute(createContextHandler(), {
  context: (request) => ({
    requestId: request.headers.get("x-request-id"),
    userAgent: request.headers.get("user-agent"),
  }),
});
