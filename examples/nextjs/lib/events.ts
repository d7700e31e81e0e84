import { createMcpHandler, type McpHandler, McpServer } from "mcp-mount";

/**
 * An endpoint with one event type, `note.created` (SEP-3415 Events: poll and push), and the
 * tool that emits it, `emit_note`: in a real app the emit comes from wherever notes are made.
 */
export function createEventsHandler(): McpHandler {
  const server = new McpServer({ name: "mcp-mount-nextjs-events", version: "0.1.0" });
  server.event({
    name: "note.created",
    description: "A note was created",
    payloadSchema: {
      type: "object",
      properties: { id: { type: "string" }, text: { type: "string" } },
      required: ["id", "text"],
    },
  });
  server.tool<{ id: string; text: string }>(
    {
      name: "emit_note",
      description: "Creates a note: emits note.created with it",
      input: {
        type: "object",
        properties: { id: { type: "string" }, text: { type: "string" } },
        required: ["id", "text"],
      },
    },
    async ({ id, text }) => server.emit("note.created", { id, text }),
  );
  // The memory store: one `next start` process holds the feed; use redisStore for several.
  return createMcpHandler(server, { secret: process.env.MCP_SECRET });
}
