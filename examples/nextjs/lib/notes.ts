import { createMcpHandler, type McpHandler, McpServer } from "mcp-mount";
import { jwtAuth } from "mcp-mount/auth";
import { type NextRouteHandler, toNextRoute } from "mcp-mount/next";

/** Scopes the notes endpoint advertises; reading needs `notes:read`, deleting `notes:write`. */
const NOTE_SCOPES = ["notes:read", "notes:write"];

/** Where the notes endpoint's tokens come from, and the URL it is reached at. */
interface NotesAuthConfig {
  issuer: string;
  jwksUrl: string;
  resource: string;
}

/** The notes endpoint behind bearer auth: JWTs of `issuer`, checked against its JWKS. */
function createNotesHandler({ issuer, jwksUrl, resource }: NotesAuthConfig): McpHandler {
  const server = new McpServer({ name: "mcp-mount-nextjs-notes", version: "0.1.0" });
  // Per process, for the demo: a real app keeps notes in its database.
  const notes = new Map([
    ["1", "Buy milk"],
    ["2", "Call Ada"],
  ]);

  server.tool(
    { name: "whoami", description: "The caller, as the verified access token names it" },
    (_args, ctx) => ({
      issuer: ctx.auth?.issuer ?? null,
      subject: ctx.auth?.subject ?? null,
      scopes: ctx.auth?.scopes ?? [],
    }),
  );

  server.tool({ name: "read_notes", description: "Lists the notes", scopes: ["notes:read"] }, () =>
    Object.fromEntries(notes),
  );

  server.tool<{ id: string }>(
    {
      name: "delete_note",
      description: "Deletes a note by id",
      input: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      scopes: ["notes:write"],
    },
    ({ id }) => (notes.delete(id) ? `Deleted note ${id}` : `No note ${id}`),
  );

  return createMcpHandler(server, {
    secret: process.env.MCP_SECRET,
    auth: jwtAuth({ issuer, jwksUrl, resource, scopesSupported: NOTE_SCOPES }),
  });
}

/** Every request while auth is not configured: 501 with a JSON-RPC error saying what to set. */
const notConfigured: NextRouteHandler = async () =>
  Response.json(
    {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32603,
        message:
          "Auth is not configured: set AUTH_ISSUER (the OAuth issuer's URL) and AUTH_RESOURCE (this endpoint's public URL)",
      },
    },
    { status: 501 },
  );

/**
 * `next build` evaluates route modules without the deployment's environment, so missing
 * settings must not throw here: the endpoint answers 501 until they are set. The resource URL
 * is configured, not derived from the request: under `next start`, `request.url` names the
 * server's own hostname (`localhost`), not the one clients use (vercel/next.js#37536).
 */
function createNotesRoute(): ReturnType<typeof toNextRoute> {
  const { AUTH_ISSUER: issuer, AUTH_RESOURCE: resource, AUTH_JWKS_URL } = process.env;
  if (!issuer || !resource)
    return {
      GET: notConfigured,
      POST: notConfigured,
      DELETE: notConfigured,
      OPTIONS: notConfigured,
    };
  const jwksUrl = AUTH_JWKS_URL || `${issuer.replace(/\/+$/, "")}/.well-known/jwks.json`;
  return toNextRoute(createNotesHandler({ issuer, jwksUrl, resource }));
}

/** The route handlers of the notes endpoint, shared with its metadata route. */
export const notesRoute = createNotesRoute();
