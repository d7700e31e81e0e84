import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// The fan-out ceiling: plain node:http in one process holding every stream (GET /mcp answers an
// SSE stream and a priming event) and, on POST /notify, writing the same list-change event to
// each with no MCP machinery, log or bus at all. Prints `listening <port>` once it listens.

const EVENT =
  'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n';
const streams = new Set<ServerResponse>();

const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write("data: \n\n");
    streams.add(res);
    res.once("close", () => streams.delete(res));
    return;
  }
  req.resume();
  req.once("end", () => {
    for (const stream of streams) stream.write(EVENT);
    res.writeHead(200, { "content-type": "text/plain" }).end("notified");
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => process.exit(0));
