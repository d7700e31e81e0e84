import { McpServer } from "../../src/index.js";

/** The scopes the notes server's issuer grants. */
export const SCOPES = ["notes:read", "notes:write"];
/** The `scope` parameter of a challenge that names every scope. */
export const ALL = 'scope="notes:read notes:write"';

/** A server whose tools need scopes, and one that reports what `ctx.auth` holds. */
export function notesServer(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.tool({ name: "whoami", description: "The caller" }, (_args, ctx) => ({
    issuer: ctx.auth?.issuer ?? null,
    subject: ctx.auth?.subject ?? null,
    clientId: ctx.auth?.clientId ?? null,
    scopes: ctx.auth?.scopes ?? [],
    token: ctx.auth?.token ?? null,
  }));
  server.tool({ name: "read_notes", scopes: ["notes:read"] }, () => "note 1");
  server.tool({ name: "delete_note", scopes: ["notes:write"] }, () => "deleted");
  server.tool({ name: "confirm" }, async (_args, ctx) => {
    const answer = await ctx.elicit("ok", {
      message: "Sure?",
      requestedSchema: { type: "object", properties: {} },
    });
    return answer.action;
  });
  return server;
}

/** The metadata URL RFC 9728 §3.1 gives an endpoint URL. */
export function metadataUrl(endpoint: string): string {
  const { origin, pathname } = new URL(endpoint);
  return `${origin}/.well-known/oauth-protected-resource${pathname}`;
}
