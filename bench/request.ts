import type { McpHttpRequest } from "mcp-mount";

/** The path every contender serves MCP on. */
export const MCP_PATH = "/mcp";

/** The argument the echo tool is called with; its result must carry it back. */
export const ECHO_TEXT = "hello";

/** A modern (2026-07-28) tools/call request's headers, mirrored from the body. */
export const REQUEST_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "echo",
};

const BODY_HEAD = '{"jsonrpc":"2.0","id":';
const BODY_TAIL = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${ECHO_TEXT}"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`;

/** The body of the tools/call request with JSON-RPC id `id`. */
export function requestBody(id: number): string {
  return BODY_HEAD + id + BODY_TAIL;
}

/**
 * The tools/call with id `id` as raw HTTP/1.1 bytes for a keep-alive connection to `port`: the
 * modern one, or another era's given its headers (a legacy session's) and body.
 */
export function rawRequest(
  port: number,
  id: number,
  headers: Record<string, string> = REQUEST_HEADERS,
  body = requestBody(id),
): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST ${MCP_PATH} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${lines.join("")}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The legacy protocol version the legacy-era run and the session memory benchmark speak. */
export const LEGACY_VERSION = "2025-11-25";

/** A 2025-11-25 client's `initialize` params, capabilities as a full-featured client declares them. */
export const INITIALIZE_PARAMS = {
  protocolVersion: LEGACY_VERSION,
  capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } },
  clientInfo: { name: "Visual Studio Code", version: "1.107.1" },
};

/** The first request of a legacy session: no session id and no version header yet. */
export const INITIALIZE_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** The `initialize` request's body. */
export const INITIALIZE_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: INITIALIZE_PARAMS,
});

/** The notification that ends the legacy handshake. */
export const INITIALIZED_BODY = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

/** A legacy request's headers once the session is up; `mcp-session-id` is added per session. */
export const LEGACY_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": LEGACY_VERSION,
};

const LEGACY_TAIL = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${ECHO_TEXT}"}}}`;

/** The body of a legacy tools/call request with JSON-RPC id `id`: no `_meta`, the session says it all. */
export function legacyRequestBody(id: number): string {
  return BODY_HEAD + id + LEGACY_TAIL;
}

/** A cheap per-response check for the hot loop: the echoed text block is in the body. */
export const ECHO_MARK = `"text":"${ECHO_TEXT}"`;

/** The JSON-RPC message in a response body, whether plain JSON or a request-scoped SSE stream. */
function responseMessage(contentType: string, text: string): unknown {
  if (!contentType.startsWith("text/event-stream")) return JSON.parse(text);
  const data = text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim());
  const last = data.at(-1);
  if (last === undefined) throw new Error("SSE response carried no data");
  return JSON.parse(last);
}

/** Throws unless the response is a successful tools/call result echoing {@link ECHO_TEXT}. */
export function verifyEchoResponse(
  id: number,
  status: number,
  contentType: string,
  text: string,
): void {
  const fail = (why: string) => {
    throw new Error(`${why}: HTTP ${status} ${contentType} ${text.slice(0, 500)}`);
  };
  if (status !== 200) fail("expected HTTP 200");
  let message: unknown;
  try {
    message = responseMessage(contentType, text);
  } catch {
    fail("response is not JSON-RPC");
  }
  const {
    jsonrpc,
    id: echoedId,
    result,
  } = message as {
    jsonrpc?: unknown;
    id?: unknown;
    result?: { content?: unknown; isError?: unknown };
  };
  if (jsonrpc !== "2.0" || echoedId !== id) fail(`expected a JSON-RPC 2.0 response with id ${id}`);
  if (!result || result.isError === true) fail("expected a successful result");
  const [block] = Array.isArray(result?.content) ? result.content : [];
  if (block?.type !== "text" || block.text !== ECHO_TEXT) {
    fail(`expected a text content block "${ECHO_TEXT}"`);
  }
}

const IN_PROCESS_HEADERS = inProcessHeaders(REQUEST_HEADERS);
const never = new AbortController().signal;

/**
 * The modern tools/call with JSON-RPC id `id` as `mcp.handle()` takes it, from a request object
 * that costs nothing to read (the in-process benchmarks: no socket, no host); or another era's,
 * given its headers (host added) and body.
 */
export function inProcessRequest(
  id: number,
  headers: Record<string, string> = IN_PROCESS_HEADERS,
  text = requestBody(id),
): McpHttpRequest {
  return {
    method: "POST",
    url: `http://127.0.0.1${MCP_PATH}`,
    header: (name) => headers[name] ?? null,
    body: async () => ({ kind: "text", text }),
    signal: never,
    onAbort: () => {},
    localAddress: "127.0.0.1",
    remoteAddress: "127.0.0.1",
  };
}

/** A request's headers as {@link inProcessRequest} takes them: the host added. */
export function inProcessHeaders(headers: Record<string, string>): Record<string, string> {
  return { ...headers, host: "127.0.0.1" };
}
