import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod";

/** One HTTP request the server saw. */
export interface Seen {
  method: string;
  rpc?: string;
  session?: string;
  lastEventId?: string;
}

/** The official SDK v1 server, legacy only, stateful, with an event store for resumption. */
export interface SdkV1Server {
  url: string;
  seen: Seen[];
  /** Every open GET stream, so a test can cut one as a network would. */
  getStreams: Set<ServerResponse>;
  /** Sends a tools list change to every session. */
  notifyToolsChanged(): void;
  close(): Promise<void>;
}

/** The SDK v1 server the client tests speak to: tools, a prompt, a resource. */
export function buildSdkV1Server(): McpServer {
  const server = new McpServer(
    { name: "sdk-v1", version: "1.0.0" },
    { capabilities: { logging: {} }, instructions: "An SDK v1 server" },
  );
  server.registerTool(
    "echo",
    {
      description: "Echoes",
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool("ask", { inputSchema: { item: z.string() } }, async ({ item }, extra) => {
    const answer = await server.server.elicitInput(
      {
        mode: "form",
        message: `Delete ${item}?`,
        requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
      },
      { relatedRequestId: extra.requestId },
    );
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  server.registerTool("sample", {}, async (extra) => {
    const result = await server.server.createMessage(
      { messages: [{ role: "user", content: { type: "text", text: "Hi?" } }], maxTokens: 5 },
      { relatedRequestId: extra.requestId },
    );
    const roots = await server.server.listRoots(undefined, { relatedRequestId: extra.requestId });
    return { content: [{ type: "text", text: JSON.stringify({ result, roots }) }] };
  });
  server.registerTool("count", {}, async (extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= 3; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: 3 },
        });
      }
    }
    return { content: [{ type: "text", text: "counted" }] };
  });
  server.registerPrompt("greet", { argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Hello ${who}` } }],
  }));
  server.registerResource("note", "note://one", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "one" }],
  }));
  return server;
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        resolve(undefined);
      }
    });
  });
}

function fail(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Starts the SDK v1 server the way its stateful example does, on node:http, port 0. */
export async function startSdkV1Server(): Promise<SdkV1Server> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();
  const seen: Seen[] = [];
  const getStreams = new Set<ServerResponse>();
  const http = createServer(async (req, res) => {
    const session = req.headers["mcp-session-id"] as string | undefined;
    const entry: Seen = { method: req.method ?? "" };
    if (session) entry.session = session;
    const lastEventId = req.headers["last-event-id"];
    if (typeof lastEventId === "string") entry.lastEventId = lastEventId;
    seen.push(entry);
    const known = session ? transports.get(session) : undefined;
    if (req.method !== "POST") {
      if (!known) return fail(res, 400, -32000, "No valid session ID provided");
      if (req.method === "GET") {
        getStreams.add(res);
        res.once("close", () => getStreams.delete(res));
      }
      return known.handleRequest(req, res);
    }
    const body = await readBody(req);
    if (body && typeof body === "object" && "method" in body) entry.rpc = String(body.method);
    if (known) return known.handleRequest(req, res, body);
    if (session) return fail(res, 404, -32001, "Session not found");
    if (entry.rpc !== "initialize") return fail(res, 400, -32000, "No valid session ID provided");
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    const server = buildSdkV1Server();
    servers.add(server);
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    getStreams,
    notifyToolsChanged: () => {
      for (const server of servers) {
        if (server.isConnected()) server.sendToolListChanged();
      }
    },
    close: async () => {
      for (const server of servers) await server.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The official SDK v1 server on the deprecated HTTP+SSE transport (2024-11-05). */
export interface SdkV1SseServer {
  /** The SSE endpoint: what a user of such a server is given. */
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** Starts the SDK v1 server behind SSEServerTransport: GET /sse, POST /messages. */
export async function startSdkV1SseServer(): Promise<SdkV1SseServer> {
  const transports = new Map<string, SSEServerTransport>();
  const seen: Seen[] = [];
  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    seen.push({ method: req.method ?? "" });
    if (url.pathname === "/sse" && req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      res.once("close", () => transports.delete(transport.sessionId));
      await buildSdkV1Server().connect(transport);
      return;
    }
    if (url.pathname === "/messages" && req.method === "POST") {
      const transport = transports.get(url.searchParams.get("sessionId") ?? "");
      if (!transport) return fail(res, 404, -32001, "Session not found");
      return transport.handlePostMessage(req, res);
    }
    res.writeHead(405).end();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/sse`,
    seen,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
