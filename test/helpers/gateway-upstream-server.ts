// An upstream MCP server over stdio for the gateway tests, built with our own McpServer: a
// tool that crashes the process mid-call, one that waits (counting the calls running at once),
// one that writes to stderr, and the input, progress and list-change features the gateway
// forwards. Run it with `node --import tsx test/helpers/gateway-upstream-server.ts`.
import { serveStdio } from "../../src/adapters/stdio.js";
import { McpServer } from "../../src/index.js";

/** The path of this script from the repository root, for `args`. */
export const GATEWAY_UPSTREAM_SCRIPT = "test/helpers/gateway-upstream-server.ts";

/** Calls running now, the most seen at once, and every call so far, across the tools. */
const load = { active: 0, maxActive: 0, calls: 0 };

async function counted<T>(run: () => Promise<T>): Promise<T> {
  load.active++;
  load.calls++;
  load.maxActive = Math.max(load.maxActive, load.active);
  try {
    return await run();
  } finally {
    load.active--;
  }
}

function waitFor(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

const number = { type: "number" } as const;
const text = { type: "string" } as const;

/** The upstream test server: every tool answers with the child's pid, so restarts show. */
export function createGatewayUpstreamServer(): McpServer {
  const server = new McpServer({
    name: "gateway-upstream",
    version: "1.0.0",
    instructions: "The gateway tests' upstream",
  });
  server.tool(
    { name: "echo", input: { type: "object", properties: { text }, required: ["text"] } },
    ({ text }) => String(text),
  );
  server.tool({ name: "pid" }, () => ({ pid: process.pid }));
  server.tool({ name: "stats" }, () => ({ pid: process.pid, ...load }));
  server.tool(
    { name: "slow", input: { type: "object", properties: { ms: number } } },
    ({ ms }, ctx) =>
      counted(async () => {
        const finished = await waitFor(Number(ms ?? 1_000), ctx.signal);
        if (!finished) process.stderr.write("aborted:slow\n");
        return { pid: process.pid, finished, maxActive: load.maxActive };
      }),
  );
  server.tool(
    { name: "crash", input: { type: "object", properties: { code: number } } },
    async ({ code }) => {
      // Exits without answering, as a server that dies mid-call does.
      process.exit(Number(code ?? 1));
    },
  );
  server.tool(
    { name: "stderr", input: { type: "object", properties: { text } } },
    ({ text: line }) => {
      process.stderr.write(`${String(line ?? "a line on stderr")}\n`);
      return "written";
    },
  );
  server.tool({ name: "progress" }, async (_args, ctx) => {
    await ctx.progress(1, 2, "half");
    await ctx.log("info", "halfway");
    await ctx.progress(2, 2, "done");
    return "finished";
  });
  server.tool({ name: "ask" }, async (_args, ctx) => {
    const answer = await ctx.elicit("ask", {
      mode: "form",
      message: "Proceed?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    });
    return { action: answer.action, content: answer.content ?? null };
  });
  server.tool({ name: "sample" }, async (_args, ctx) => {
    const result = await ctx.sample("sample", {
      messages: [{ role: "user", content: { type: "text", text: "Hi?" } }],
      maxTokens: 10,
    });
    return { content: result.content };
  });
  server.tool({ name: "add_tool" }, () => {
    server.tool({ name: "added" }, () => "added");
    return "ok";
  });
  server.prompt(
    { name: "greet", arguments: [{ name: "who", required: true }] },
    ({ who }) => `Say hello to ${who}`,
  );
  server.resource({ uri: "test://static", name: "static", mimeType: "text/plain" }, () => "static");
  return server;
}

if (process.argv[1]?.endsWith("gateway-upstream-server.ts")) {
  if (process.env.GATEWAY_UPSTREAM_BANNER)
    process.stderr.write(`${process.env.GATEWAY_UPSTREAM_BANNER}\n`);
  serveStdio(createGatewayUpstreamServer(), { secret: "gateway-upstream-tests" });
}
