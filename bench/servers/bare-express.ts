import express from "express";
import { serve } from "./serve.js";

// The Express ceiling: an Express 5 app answering, at app.use("/mcp", …), the same canned
// tools/call result as the bare node:http server, reading and parsing the body the same way, and
// no MCP machinery at all. BENCH_EXPRESS_JSON=1 puts express.json() in front, as for the mount.
const PREFIX = '{"jsonrpc":"2.0","id":';
const SUFFIX = ',"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}';

const answer = (res: express.Response, id: unknown) => {
  const body = PREFIX + JSON.stringify(id) + SUFFIX;
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
};

const app = express();
if (process.env.BENCH_EXPRESS_JSON === "1") {
  app.use(express.json());
  app.use("/mcp", (req, res) => answer(res, (req.body as { id: unknown }).id));
} else {
  app.use("/mcp", (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      answer(res, (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown }).id);
    });
  });
}
serve(app);
