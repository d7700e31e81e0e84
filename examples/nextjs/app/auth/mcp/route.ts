import { notesRoute } from "../../../lib/notes";

export const runtime = "nodejs";

export const { GET, POST, DELETE, OPTIONS } = notesRoute;
