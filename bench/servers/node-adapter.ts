import { toNodeHandler } from "mcp-mount/node";
import { cannedMcp } from "./canned.js";
import { serve } from "./serve.js";

// The node:http adapter alone: `toNodeHandler` reading the body through its request and writing
// the canned answer, with no MCP machinery (what the adapter adds to bare node:http).
serve(toNodeHandler(cannedMcp));
