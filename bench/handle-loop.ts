import { createMcpHandler, type McpHttpResponse } from "mcp-mount";
import {
  INITIALIZE_BODY,
  INITIALIZE_HEADERS,
  INITIALIZED_BODY,
  inProcessHeaders,
  inProcessRequest,
  LEGACY_HEADERS,
  legacyRequestBody,
} from "./request.js";
import { cannedMcp } from "./servers/canned.js";
import { createEchoServer } from "./servers/echo-server.js";

// The child of `npm run bench:instructions:handle`: BENCH_LOOP_CALLS echo tools/calls through
// `mcp.handle()`, one after another, with a request object that costs nothing to read. The
// handler (BENCH_LOOP_HANDLER) is the canned answer (canned), the mount taking modern calls
// (mount), or the mount taking calls of one warm legacy session (legacy, memory store). No
// socket, no timer: what runs is the same on every run, so its instruction count is too.

const kind = process.env.BENCH_LOOP_HANDLER;
const handler =
  kind === "canned"
    ? cannedMcp
    : createMcpHandler(createEchoServer("bench-handle"), {
        secret: "bench-secret-0123456789abcdef",
      });

/** Reads a response's whole body, as a host writing it out would. */
async function drain(response: McpHttpResponse): Promise<string> {
  if (response.body === null || typeof response.body === "string") return response.body ?? "";
  return new Response(response.body).text();
}

/** The request maker for each call: a legacy session is opened first. */
async function requests(): Promise<(id: number) => ReturnType<typeof inProcessRequest>> {
  if (kind !== "legacy") return (id) => inProcessRequest(id);
  const init = await handler.handle(
    inProcessRequest(0, inProcessHeaders(INITIALIZE_HEADERS), INITIALIZE_BODY),
  );
  await drain(init);
  const sessionId = init.headers["mcp-session-id"];
  if (!sessionId) throw new Error(`initialize answered ${init.status} without a session`);
  const headers = inProcessHeaders({ ...LEGACY_HEADERS, "mcp-session-id": sessionId });
  const initialized = await handler.handle(inProcessRequest(0, headers, INITIALIZED_BODY));
  if (initialized.status !== 202) throw new Error(`initialized answered ${initialized.status}`);
  return (id) => inProcessRequest(id, headers, legacyRequestBody(id));
}

const request = await requests();
const calls = Number(process.env.BENCH_LOOP_CALLS);
for (let id = 1; id <= calls; id++) {
  const response = await handler.handle(request(id));
  if (response.status !== 200) throw new Error(`handle answered ${response.status}`);
  await drain(response);
}
