import { createMcpHandler, type McpHttpRequest } from "mcp-mount";
import { MCP_PATH, REQUEST_HEADERS, requestBody } from "./request.js";
import { cannedMcp } from "./servers/canned.js";
import { createEchoServer } from "./servers/echo-server.js";

// The child of `npm run bench:instructions:handle`: BENCH_LOOP_CALLS modern echo tools/calls
// through `mcp.handle()` (BENCH_LOOP_HANDLER=mount) or the canned answer (canned), one after
// another, with a request object that costs nothing to read. No socket, no timer: what runs is
// the same on every run, so its instruction count is too.

const handler =
  process.env.BENCH_LOOP_HANDLER === "canned"
    ? cannedMcp
    : createMcpHandler(createEchoServer("bench-handle"), {
        secret: "bench-secret-0123456789abcdef",
      });
const calls = Number(process.env.BENCH_LOOP_CALLS);
const HEADERS: Record<string, string> = { ...REQUEST_HEADERS, host: "127.0.0.1" };
const never = new AbortController().signal;

function request(id: number): McpHttpRequest {
  const text = requestBody(id);
  return {
    method: "POST",
    url: `http://127.0.0.1${MCP_PATH}`,
    header: (name) => HEADERS[name] ?? null,
    body: async () => ({ kind: "text", text }),
    signal: never,
    onAbort: () => {},
    localAddress: "127.0.0.1",
    remoteAddress: "127.0.0.1",
  };
}

for (let id = 1; id <= calls; id++) {
  const response = await handler.handle(request(id));
  if (response.status !== 200) throw new Error(`handle answered ${response.status}`);
}
