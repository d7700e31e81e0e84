import { toNextRoute } from "mcp-mount/next";
import { createExampleHandler } from "../../../lib/server";

export const runtime = "edge";

export const { GET, POST, DELETE, OPTIONS } = toNextRoute(createExampleHandler("edge"));
