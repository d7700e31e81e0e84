import { createMcpHandler } from "mcp-mount";
import { inProcessRequest } from "./request.js";
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
for (let id = 1; id <= calls; id++) {
  const response = await handler.handle(inProcessRequest(id));
  if (response.status !== 200) throw new Error(`handle answered ${response.status}`);
}
