import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// The official SDK v1 (1.32) serving legacy sessions as its jsonResponseStreamableHttp example
// does, on node:http instead of Express: one McpServer and stateful StreamableHTTPServerTransport
// per session (randomUUID ids, JSON responses) kept in a Map until the session is deleted. The
// body is parsed as express.json() would, and the Host checked as createMcpExpressApp's
// localhostHostValidation() does.
const LOCALHOST = new Set(["localhost", "127.0.0.1", "[::1]"]);
const sessions = new Map<string, StreamableHTTPServerTransport>();

function createServer(): McpServer {
  const server = new McpServer({ name: "bench-sdk-v1", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: ECHO_DESCRIPTION, inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

function fail(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

async function post(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined) {
  let body: unknown;
  try {
    body = await readJson(req);
  } catch {
    return fail(res, 400, -32700, "Parse error");
  }
  const transport = sessionId === undefined ? undefined : sessions.get(sessionId);
  if (transport) return transport.handleRequest(req, res, body);
  if (sessionId !== undefined) return fail(res, 404, -32001, "Session not found");
  if (!isInitializeRequest(body)) return fail(res, 400, -32000, "No valid session ID provided");
  const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: randomUUID,
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      sessions.set(id, created);
    },
  });
  created.onclose = () => {
    if (created.sessionId) sessions.delete(created.sessionId);
  };
  await createServer().connect(created);
  await created.handleRequest(req, res, body);
}

serve((req, res) => {
  let hostname: string | undefined;
  try {
    hostname = new URL(`http://${req.headers.host}`).hostname;
  } catch {}
  if (hostname === undefined || !LOCALHOST.has(hostname))
    return fail(res, 403, -32000, "Invalid Host");
  const header = req.headers["mcp-session-id"];
  const sessionId = typeof header === "string" ? header : undefined;
  const answer = (async () => {
    if (req.method === "POST") return post(req, res, sessionId);
    const transport = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (!transport)
      return fail(res, sessionId ? 404 : 400, -32000, "Invalid or missing session ID");
    return transport.handleRequest(req, res);
  })();
  answer.catch(() => {
    if (!res.headersSent) fail(res, 500, -32603, "Internal server error");
  });
});
