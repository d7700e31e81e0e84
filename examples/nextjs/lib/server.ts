import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
  type SchemaInput,
} from "mcp-mount";
import { z } from "zod";
import { registerAdderApp } from "../../shared/adder-app";

/** The Next.js runtime a route runs on. */
export type Runtime = "nodejs" | "edge";

// Plain JSON Schema works on both runtimes (interpreted where the edge forbids code
// generation); zod, or any Standard Schema validator, works as well.
const inputs: Record<"echo" | "countdown", SchemaInput> = {
  echo: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  countdown: z.object({ n: z.int().min(1).max(20) }),
};

/**
 * The example's MCP endpoint for one runtime: echo, a runtime probe, a countdown, a greeting and
 * the adder app (an MCP App); `options` adds handler options (the route behind a proxy sets
 * `trustProxy`).
 */
export function createExampleHandler(
  runtime: Runtime,
  options: McpHandlerOptions = {},
): McpHandler {
  const server = new McpServer({
    name: "mcp-mount-nextjs",
    version: "0.1.0",
    instructions: `Utility tools served by a Next.js route handler on the ${runtime} runtime.`,
  });

  server.tool<{ text: string }>(
    {
      name: "echo",
      description: "Returns the text it is given",
      input: inputs.echo,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ text }) => text,
  );

  server.tool(
    {
      name: "runtime",
      description: "Names the Next.js runtime that actually serves this route",
      annotations: { readOnlyHint: true },
    },
    () => ({ runtime: process.env.NEXT_RUNTIME ?? "unknown" }),
  );

  server.tool<{ n: number }>(
    {
      name: "countdown",
      description: "Counts down from n, reporting progress as it goes",
      input: inputs.countdown,
    },
    async ({ n }, ctx) => {
      for (let i = 1; i <= n; i++) {
        await ctx.progress(i, n, `${n - i} to go`);
        await new Promise((resolve) => setTimeout(resolve, 10));
        ctx.signal.throwIfAborted();
      }
      return "Lift-off!";
    },
  );

  server.tool(
    {
      name: "greet",
      description: "Asks the user for their name, then greets them",
    },
    async (_args, ctx) => {
      const answer = await ctx.elicit("name", {
        mode: "form",
        message: "What is your name?",
        requestedSchema: {
          type: "object",
          properties: { name: { type: "string", title: "Name" } },
          required: ["name"],
        },
      });
      const content = answer.content as { name?: string } | undefined;
      if (answer.action !== "accept" || !content?.name) return "Hello, stranger.";
      return `Hello, ${content.name}!`;
    },
  );

  // An MCP App: a view a host renders, whose button calls a server tool through the host.
  registerAdderApp(server);

  // Edge isolates share no memory, so legacy clients are served there without sessions.
  return createMcpHandler(server, {
    secret: process.env.MCP_SECRET,
    legacy: runtime === "edge" ? { stateless: true } : true,
    ...options,
  });
}

const NODE_HANDLER = Symbol.for("mcp-mount-nextjs.node-handler");

/**
 * The Node.js route's handler, one per process: `app/mcp` serves it and `app/healthz` reports its
 * health (on globalThis, since Next may bundle each route with its own copy of this module).
 */
export function nodeHandler(): McpHandler {
  const global = globalThis as { [NODE_HANDLER]?: McpHandler };
  global[NODE_HANDLER] ??= createExampleHandler("nodejs");
  return global[NODE_HANDLER];
}
