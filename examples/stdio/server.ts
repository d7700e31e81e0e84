import { serveStdio } from "mcp-mount/stdio";
import { createExampleServer } from "../express/app.js";

// The same server as the Express example, over stdin/stdout; logs go to stderr only.
serveStdio(createExampleServer(), { secret: process.env.MCP_SECRET });
