import { notesRoute } from "../../../../../lib/notes";

// RFC 9728 §3.1: the metadata of /auth/mcp lives at the well-known path with /auth/mcp appended.
// The MCP handler serves it from the request's path, so this route only forwards the GET (and its
// CORS preflight: browser clients read the document from other origins).
export const { GET, OPTIONS } = notesRoute;
