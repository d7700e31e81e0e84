import express from "express";
import { createMcpHandler, type McpHandlerOptions, McpServer } from "mcp-mount";
import { toExpress } from "mcp-mount/express";

/** The example server: a few real tools, a prompt, a resource and a template. */
export function createExampleServer(): McpServer {
  const server = new McpServer({
    name: "mcp-mount-example",
    version: "0.1.0",
    instructions: "Utility tools: echo text, do arithmetic, look up notes, and plan a trip.",
  });

  server.tool(
    {
      name: "echo",
      description: "Returns the text it is given",
      input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ text }) => String(text),
  );

  server.tool(
    {
      name: "add",
      description: "Adds two numbers",
      input: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      output: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
      annotations: { readOnlyHint: true },
    },
    ({ a, b }) => ({ sum: Number(a) + Number(b) }),
  );

  server.tool(
    {
      name: "countdown",
      description: "Counts down from n, reporting progress and log messages as it goes",
      input: {
        type: "object",
        properties: { n: { type: "integer", minimum: 1, maximum: 20 } },
        required: ["n"],
      },
    },
    async ({ n }, ctx) => {
      const total = Number(n);
      for (let i = 1; i <= total; i++) {
        await ctx.progress(i, total, `${total - i} to go`);
        await ctx.log("info", { remaining: total - i });
        await new Promise((resolve) => setTimeout(resolve, 20));
        ctx.signal.throwIfAborted();
      }
      return "Lift-off!";
    },
  );

  server.tool(
    {
      name: "plan_trip",
      description: "Plans a trip, asking the user to confirm the destination first",
      input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
    async ({ city }, ctx) => {
      const answer = await ctx.elicit("confirm", {
        mode: "form",
        message: `Plan a trip to ${String(city)}?`,
        requestedSchema: {
          type: "object",
          properties: { confirm: { type: "boolean", title: "Go ahead" } },
          required: ["confirm"],
        },
      });
      const content = answer.content as { confirm?: boolean } | undefined;
      if (answer.action !== "accept" || !content?.confirm) return "Trip cancelled.";
      return `Booked: three days in ${String(city)}.`;
    },
  );

  const notes = new Map([
    ["1", "Buy milk"],
    ["2", "Write the MCP talk"],
  ]);

  server.resource(
    { uri: "notes://index", name: "notes-index", mimeType: "text/plain", ttlMs: 60_000 },
    () => [...notes.entries()].map(([id, text]) => `${id}: ${text}`).join("\n"),
  );

  server.resourceTemplate(
    {
      uriTemplate: "notes://{id}",
      name: "note",
      mimeType: "text/plain",
      list: () => [...notes.keys()].map((id) => ({ uri: `notes://${id}`, name: `note-${id}` })),
      complete: { id: (value) => [...notes.keys()].filter((id) => id.startsWith(value)) },
    },
    (_uri, { id }) => {
      const text = notes.get(id ?? "");
      if (text === undefined) throw new Error(`No note ${id}`);
      return text;
    },
  );

  server.prompt(
    {
      name: "summarize",
      description: "Asks the model to summarise a text in a given style",
      arguments: [
        { name: "text", required: true },
        {
          name: "style",
          complete: (value) =>
            ["brief", "detailed", "bullet points"].filter((s) => s.startsWith(value)),
        },
      ],
    },
    ({ text, style }) => `Summarise the following text (${style ?? "brief"}):\n\n${text}`,
  );

  return server;
}

/** The Express app with the MCP endpoint mounted at /mcp. */
export function createExampleApp(options: McpHandlerOptions = {}) {
  const mcp = createMcpHandler(createExampleServer(), options);
  const app = express();
  app.use("/mcp", toExpress(mcp));
  // Readiness for orchestrators: 503 while draining (after SIGTERM) or while the store is down.
  app.get("/healthz", async (_req, res) => {
    const health = await mcp.health();
    res.status(health.ready ? 200 : 503).json(health);
  });
  app.get("/", (_req, res) => {
    res.type("text/plain").send("MCP endpoint: POST /mcp\n");
  });
  return { app, mcp };
}
