import { McpServer } from "../../src/index.js";

/** Observations the tests make about handlers from outside. */
export interface Probe {
  aborted: string[];
  started: string[];
}

/** A server exercising every feature the HTTP tests need. */
export function createFixtureServer(
  probe: Probe = { aborted: [], started: [] },
  pageSize?: number,
): McpServer {
  const server = new McpServer({
    name: "fixture",
    version: "1.0.0",
    instructions: "Fixture server for tests",
    pageSize,
    cache: { tools: { ttlMs: 60_000, cacheScope: "public" } },
  });

  server.tool(
    {
      name: "echo",
      input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      annotations: { readOnlyHint: true },
    },
    ({ text }) => String(text),
  );
  server.tool({ name: "json", input: { type: "object" } }, () => ({ answer: 42, list: [1, 2] }));
  server.tool(
    {
      name: "typed",
      input: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
      output: { type: "object", properties: { double: { type: "number" } }, required: ["double"] },
    },
    ({ a }) => ({ double: Number(a) * 2 }),
  );
  server.tool(
    {
      name: "bad_output",
      output: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    },
    () => ({ n: "not a number" }),
  );
  server.tool({ name: "throws" }, () => {
    throw new Error("database unavailable");
  });
  server.tool({ name: "steps" }, async (_args, ctx) => {
    await ctx.progress(1, 2, "half");
    await ctx.log("debug", "debug detail");
    await ctx.log("warning", "careful");
    await ctx.progress(2, 2, "done");
    return "finished";
  });
  server.tool({ name: "slow" }, async (_args, ctx) => {
    probe.started.push("slow");
    await ctx.progress(1, 100);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        probe.aborted.push("slow");
        resolve();
      });
    });
    await ctx.progress(2, 100);
    return "slow done";
  });
  server.tool(
    { name: "confirm", input: { type: "object", properties: { item: { type: "string" } } } },
    async ({ item }, ctx) => {
      ctx.state.calls = Number(ctx.state.calls ?? 0) + 1;
      const answer = await ctx.elicit("confirm", {
        mode: "form",
        message: `Delete ${String(item)}?`,
        requestedSchema: {
          type: "object",
          properties: { ok: { type: "boolean" } },
          required: ["ok"],
        },
      });
      return { action: answer.action, content: answer.content, rounds: ctx.state.calls };
    },
  );
  server.tool({ name: "two_steps" }, async (_args, ctx) => {
    const first = await ctx.elicit("step1", {
      mode: "form",
      message: "First?",
      requestedSchema: { type: "object", properties: { v: { type: "string" } } },
    });
    const second = await ctx.sample("step2", {
      messages: [{ role: "user", content: { type: "text", text: "Second?" } }],
      maxTokens: 10,
    });
    return { first: first.content, second: second.content };
  });
  server.tool({ name: "both_at_once" }, async (_args, ctx) => {
    const [name, roots] = await Promise.all([
      ctx.elicit("name", {
        mode: "form",
        message: "Name?",
        requestedSchema: { type: "object", properties: {} },
      }),
      ctx.roots("client_roots"),
    ]);
    return { name: name.action, roots: roots.roots };
  });
  server.tool(
    {
      name: "regional",
      input: {
        type: "object",
        properties: {
          region: { type: "string", "x-mcp-header": "Region" },
          count: { type: "integer", "x-mcp-header": "Count" },
          query: { type: "string" },
        },
        required: ["query"],
      },
    },
    ({ region, count, query }) => `${String(region)}:${String(count)}:${String(query)}`,
  );

  server.prompt(
    {
      name: "greet",
      description: "Greets someone",
      arguments: [
        {
          name: "who",
          required: true,
          complete: (value) => ["alice", "albert", "bob"].filter((n) => n.startsWith(value)),
        },
        { name: "style" },
      ],
    },
    ({ who, style }) => `Say hello to ${who}${style ? ` in a ${style} way` : ""}`,
  );
  server.prompt(
    {
      name: "many",
      arguments: [{ name: "x", complete: () => Array.from({ length: 150 }, (_, i) => `v${i}`) }],
    },
    () => [
      { role: "user", content: { type: "text", text: "one" } },
      { role: "assistant", content: { type: "text", text: "two" } },
    ],
  );

  server.resource(
    { uri: "test://static", name: "static", mimeType: "text/plain", ttlMs: 5_000 },
    () => "static text",
  );
  server.resource(
    { uri: "test://binary", name: "binary", mimeType: "application/octet-stream" },
    () => new Uint8Array([0, 1, 2, 255]),
  );
  server.resourceTemplate(
    {
      uriTemplate: "test://items/{id}",
      name: "item",
      mimeType: "application/json",
      cacheScope: "private",
      list: () => [{ uri: "test://items/1", name: "item-1" }],
      complete: { id: (value) => ["1", "2", "10"].filter((id) => id.startsWith(value)) },
    },
    (uri, { id }) => ({ uri, mimeType: "application/json", text: JSON.stringify({ id }) }),
  );

  server.method("fixture/echo", (params) => ({ echoed: params.value ?? null }));
  return server;
}
