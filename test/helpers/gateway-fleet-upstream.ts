// The crash-test upstream of test/helpers/gateway-upstream-server.ts (echo, pid, crash...) plus
// `ask_pid`, which asks its client mid-call and answers with its own pid: through a fleet of
// gateways it shows which gateway process's child ran a call whose answer came in on another;
// and `hang`, which says on stderr when it starts and when its call is cancelled.
// Run it with `node --import tsx test/helpers/gateway-fleet-upstream.ts`.
import { serveStdio } from "../../src/adapters/stdio.js";
import { createGatewayUpstreamServer } from "./gateway-upstream-server.js";

const server = createGatewayUpstreamServer();
server.tool({ name: "ask_pid" }, async (_args, ctx) => {
  const answer = await ctx.elicit("ask", {
    mode: "form",
    message: "Proceed?",
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
  });
  return { pid: process.pid, action: answer.action, content: answer.content ?? null };
});
server.tool(
  { name: "hang", input: { type: "object", properties: { tag: { type: "string" } } } },
  async ({ tag }, ctx) => {
    process.stderr.write(`started:${String(tag)}\n`);
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    process.stderr.write(`cancelled:${String(tag)}\n`);
    return "cancelled";
  },
);
serveStdio(server, { secret: "gateway-fleet-upstream" });
