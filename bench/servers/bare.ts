import { cannedListener } from "./canned.js";
import { serve } from "./serve.js";

// The ceiling: node:http reading and parsing the body and answering a canned tools/call result
// with the request's id and a Content-Length, and no MCP machinery at all.
serve(cannedListener);
