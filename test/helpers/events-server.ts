import { bearerAuth } from "../../src/auth/index.js";
import type { EventRegistration } from "../../src/index.js";
import { McpServer } from "../../src/index.js";
import { assertEventsEra } from "./events-schema.js";
import { modernHeaders, modernMeta } from "./modern.js";
import { SseReader } from "./stream.js";

/**
 * The event types the events suites serve: `note.created` (tag filter by `match`, redaction by
 * `transform`, every mode), `poll.only` (poll only), `guarded` (`authorize` refuses the room
 * "private").
 */
export const NOTE_CREATED: EventRegistration = {
  name: "note.created",
  description: "A note was created",
  inputSchema: {
    type: "object",
    properties: { tag: { type: "string" }, redact: { type: "boolean" } },
    additionalProperties: false,
  },
  payloadSchema: {
    type: "object",
    properties: { id: { type: "string" }, tag: { type: "string" }, author: { type: "string" } },
    required: ["id"],
  },
  match: (_ctx, occurrence, args) => args.tag === undefined || occurrence.data.tag === args.tag,
  transform: (_ctx, occurrence, args) =>
    args.redact ? { ...occurrence, data: { ...occurrence.data, author: "-" } } : occurrence,
};

/** A server with the suites' event types; `retain` overrides note.created's retention. */
export function createEventsServer(retain?: EventRegistration["retain"]): McpServer {
  const server = new McpServer({ name: "events-tests", version: "1.0.0" });
  server.event(retain ? { ...NOTE_CREATED, retain } : NOTE_CREATED);
  server.event({ name: "poll.only", delivery: ["poll"] });
  server.event({
    name: "guarded",
    inputSchema: { type: "object", properties: { room: { type: "string" } } },
    authorize: (_ctx, args) => args.room !== "private",
  });
  return server;
}

/** Bearer auth whose token is the subject (issuer https://auth.example.com). */
export function tokenAuth() {
  return bearerAuth({
    authorizationServers: ["https://auth.example.com"],
    verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
  });
}

/** The principal key of a `tokenAuth` token, as `emit({ principal })` takes it. */
export const principalOf = (token: string) => `https://auth.example.com|${token}`;

/** How a suite reaches the endpoint with a live body: `mcp.fetch`, or a real socket at `url`. */
export type Fetcher = (request: Request) => Promise<Response>;

let nextId = 1;

/** An open `events/stream`: its messages as they come, each validated, and a way to end it. */
export interface OpenStream {
  id: number;
  status: number;
  headers: Headers;
  /** The next message, validated against the events schema and the era's; undefined if none came in `ms`. */
  next(ms?: number): Promise<Record<string, unknown> | undefined>;
  /** Cuts the connection from the client's side. */
  cancel(): Promise<void>;
  readonly ended: boolean;
}

/** Opens a modern `events/stream` at `url`, with `token` as a bearer when given. */
export async function openEventStream(
  fetcher: Fetcher,
  url: string,
  params: Record<string, unknown>,
  token?: string,
): Promise<OpenStream> {
  const id = nextId++;
  const headers: Record<string, string> = modernHeaders("events/stream");
  if (token) headers.authorization = `Bearer ${token}`;
  const controller = new AbortController();
  const response = await fetcher(
    new Request(url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "events/stream",
        params: { ...params, _meta: modernMeta() },
      }),
      signal: controller.signal,
    }),
  );
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const text = await response.text();
    const message = JSON.parse(text) as Record<string, unknown>;
    assertEventsEra("modern", message, "events/stream");
    const queue = [message];
    return {
      id,
      status: response.status,
      headers: response.headers,
      next: async () => queue.shift(),
      cancel: async () => {},
      ended: true,
    };
  }
  const reader = new SseReader(response.body!);
  return {
    id,
    status: response.status,
    headers: response.headers,
    async next(ms = 5_000) {
      const message = await reader.next(ms);
      if (message) assertEventsEra("modern", message, "events/stream");
      return message;
    },
    async cancel() {
      controller.abort();
      await reader.cancel();
    },
    get ended() {
      return reader.ended && reader.pending === 0;
    },
  };
}
