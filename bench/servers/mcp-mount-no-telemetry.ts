import { createMcpHandler } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { createEchoServer } from "./echo-server.js";
import { serve } from "./serve.js";

// The mount as bench:instructions' `mcp-mount`, with `telemetry: false`: what telemetry without
// an SDK costs, by difference.
const mcp = createMcpHandler(createEchoServer("bench-mcp-mount"), {
  secret: "bench-secret-0123456789abcdef",
  telemetry: false,
});
serve(toNodeHandler(mcp));
