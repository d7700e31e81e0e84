import { toNextRoute } from "mcp-mount/next";
import { createEventsHandler } from "../../../lib/events";

export const { GET, POST, DELETE, OPTIONS } = toNextRoute(createEventsHandler());
