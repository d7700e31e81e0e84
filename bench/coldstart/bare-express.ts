import express from "express";
import { listen } from "./listen.js";

// The Express floor: Node starting, loading Express and answering a canned tools/call result.
const importedMs = performance.now();
const app = express();
app.use("/mcp", (req, res) => {
  req.resume();
  req.once("end", () => {
    res.setHeader("content-type", "application/json");
    res.end('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}');
  });
});
listen(app, importedMs);
