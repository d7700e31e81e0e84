import { listen } from "./listen.js";

// The floor: Node starting, loading node:http and answering a canned tools/call result.
const importedMs = performance.now();
listen((req, res) => {
  req.resume();
  req.once("end", () => {
    res.setHeader("content-type", "application/json");
    res.end('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}');
  });
}, importedMs);
