import { serve } from "./serve.js";

// The ceiling: node:http reading and parsing the body and answering a canned tools/call result
// with the request's id and a Content-Length, and no MCP machinery at all.
const PREFIX = '{"jsonrpc":"2.0","id":';
const SUFFIX = ',"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}';

serve((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const { id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown };
    const body = PREFIX + JSON.stringify(id) + SUFFIX;
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
  });
});
