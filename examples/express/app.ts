import { randomUUID } from "node:crypto";
import express from "express";
import { createMcpHandler, type McpHandlerOptions, McpServer } from "mcp-mount";
import { toExpress } from "mcp-mount/express";
import { registerAdderApp } from "../shared/adder-app.js";

/** What the Express app hands each request's handlers as `ctx.app`. */
export interface ExampleApp {
  /** The caller's `X-Request-Id`, or one made up for this request. */
  requestId: string;
  /** The caller's address, as Express sees it (`req.ip`). */
  address: string | undefined;
}

/**
 * The example server: a few real tools, a prompt, a resource and a template. `App` types
 * `ctx.app`, the per-request context of the host it is mounted in (none under stdio).
 */
export function createExampleServer<App = unknown>(): McpServer<App> {
  const server = new McpServer<App>({
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

/**
 * The Express app with the MCP endpoint mounted at /mcp, plus `whoami`, which reads what the app
 * derived from the request (`ctx.app`). The context is computed again for every HTTP request,
 * so a multi round-trip retry or a legacy reply sees its own request's, never the first one's.
 */
export function createExampleApp(options: McpHandlerOptions<ExampleApp> = {}) {
  const server = createExampleServer<ExampleApp>();
  // An MCP App: a view a host renders, whose button calls a server tool through the host.
  registerAdderApp(server);
  server.tool(
    {
      name: "whoami",
      description: "The request as the Express app saw it: its request id and the caller's address",
      output: {
        type: "object",
        properties: { requestId: { type: "string" }, address: { type: ["string", "null"] } },
        required: ["requestId", "address"],
      },
      annotations: { readOnlyHint: true },
    },
    (_args, ctx) => ({ requestId: ctx.app.requestId, address: ctx.app.address ?? null }),
  );
  const mcp = createMcpHandler(server, options);
  const app = express();
  app.use(
    "/mcp",
    toExpress(mcp, {
      context: (req): ExampleApp => ({
        requestId: req.get("x-request-id") ?? randomUUID(),
        address: req.ip,
      }),
    }),
  );
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
