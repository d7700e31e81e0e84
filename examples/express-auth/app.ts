import express from "express";
import { createMcpHandler, type McpHandlerOptions, McpServer } from "mcp-mount";
import { jwtAuth } from "mcp-mount/auth";
import { toExpress, toExpressMetadata } from "mcp-mount/express";

/** The scopes of the notes API. */
export const SCOPES = ["notes:read", "notes:write"];

/** A small notes server: reading needs `notes:read`, changing needs `notes:write`. */
export function createNotesServer(): McpServer {
  const notes = new Map<string, string>();
  const server = new McpServer({ name: "mcp-mount-notes", version: "0.1.0" });
  server.tool(
    {
      name: "whoami",
      description: "The verified caller: issuer, subject, client and scopes",
      annotations: { readOnlyHint: true },
    },
    (_args, ctx) => ({
      issuer: ctx.auth?.issuer ?? null,
      subject: ctx.auth?.subject ?? null,
      clientId: ctx.auth?.clientId ?? null,
      scopes: ctx.auth?.scopes ?? [],
    }),
  );
  server.tool(
    {
      name: "list_notes",
      description: "Lists the notes",
      scopes: ["notes:read"],
      annotations: { readOnlyHint: true },
    },
    () => ({ notes: [...notes].map(([id, text]) => ({ id, text })) }),
  );
  server.tool(
    {
      name: "add_note",
      description: "Adds a note",
      scopes: ["notes:write"],
      input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
    ({ text }) => {
      const id = String(notes.size + 1);
      notes.set(id, String(text));
      return { id };
    },
  );
  server.tool(
    {
      name: "delete_note",
      description: "Deletes a note",
      scopes: ["notes:write"],
      input: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      annotations: { destructiveHint: true },
    },
    ({ id }) => ({ deleted: notes.delete(String(id)) }),
  );
  return server;
}

/**
 * The Express app: the endpoint at /mcp behind JWT auth, and its metadata document.
 * `requiredScopes` are what every request needs (and what a 401 asks for).
 */
export function createAuthExampleApp(
  options: { issuer: string; jwksUrl: string; requiredScopes?: string[] } & Omit<
    McpHandlerOptions,
    "auth"
  >,
) {
  const { issuer, jwksUrl, requiredScopes, ...handlerOptions } = options;
  const mcp = createMcpHandler(createNotesServer(), {
    ...handlerOptions,
    auth: jwtAuth({
      issuer,
      jwksUrl,
      scopesSupported: SCOPES,
      ...(requiredScopes ? { requiredScopes } : {}),
    }),
  });
  const app = express();
  app.use(toExpressMetadata(mcp));
  app.use("/mcp", toExpress(mcp));
  return { app, mcp };
}
