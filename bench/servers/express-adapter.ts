import express from "express";
import { toExpress } from "mcp-mount/express";
import { cannedMcp } from "./canned.js";
import { serve } from "./serve.js";

// The Express adapter alone: toExpress reading the body through the adapter and answering the
// bare servers' canned result, with no MCP machinery behind it. Between bare Express and the
// mount on Express, it splits what the mount costs there into the adapter's part and the rest.
const app = express();
if (process.env.BENCH_EXPRESS_JSON === "1") app.use(express.json());
app.use("/mcp", toExpress(cannedMcp));
serve(app);
