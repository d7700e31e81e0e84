import express from "express";
import { answerCanned, cannedListener } from "./canned.js";
import { serve } from "./serve.js";

// The Express ceiling: an Express 5 app answering, at app.use("/mcp", …), the same canned
// tools/call result as the bare node:http server, reading and parsing the body the same way, and
// no MCP machinery at all. BENCH_EXPRESS_JSON=1 puts express.json() in front, as for the mount.
const app = express();
if (process.env.BENCH_EXPRESS_JSON === "1") {
  app.use(express.json());
  app.use("/mcp", (req, res) => answerCanned(res, (req.body as { id: unknown }).id));
} else {
  app.use("/mcp", cannedListener);
}
serve(app);
