import { createMcpHandler } from "mcp-mount";
import { toNodeHandler } from "mcp-mount/node";
import { createEchoServer } from "./echo-server.js";
import { serve } from "./serve.js";

// This package as the README mounts it on node:http, from the built dist.
const server = createEchoServer("bench-mcp-mount");

serve(toNodeHandler(createMcpHandler(server, { secret: "bench-secret-0123456789abcdef" })));
