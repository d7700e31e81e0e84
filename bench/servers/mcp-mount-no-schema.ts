import { createMcpHandler, McpServer } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// `mcp-mount-no-telemetry` with an echo tool that has no input schema, so no arguments are
// validated: what validation costs, by difference.
const server = new McpServer({ name: "bench-mcp-mount", version: "1.0.0" });
server.tool({ name: "echo", description: ECHO_DESCRIPTION }, (args: Record<string, unknown>) =>
  String(args.text),
);
serve(
  toNodeHandler(
    createMcpHandler(server, { secret: "bench-secret-0123456789abcdef", telemetry: false }),
  ),
);
