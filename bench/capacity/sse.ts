import { request as httpRequest, type IncomingMessage } from "node:http";
import { LEGACY_VERSION, MCP_PATH, REQUEST_HEADERS } from "../request.js";

// Long-lived SSE streams for the capacity benchmark: each its own loopback connection (raw
// node:http, no pooling), framed with a few string operations per chunk so the reader adds
// little. A stream counts as open once its first event (priming event or acknowledgement) came.

/** Which kind of idle stream: a modern `subscriptions/listen` or a legacy session's GET. */
export type StreamKind = "listen" | "get";

/** Streams (or sessions) being opened at once. */
const OPENING = 100;

/**
 * Opens one SSE request on `port`; resolves once its first event arrived. `onEvent` then gets
 * every later event's text (keep-alive comments left out).
 */
export function openSse(
  port: number,
  method: "GET" | "POST",
  headers: Record<string, string>,
  body?: string,
  onEvent: (event: string) => void = () => {},
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path: MCP_PATH,
      method,
      headers,
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`${method} stream: HTTP ${response.statusCode}`));
        return;
      }
      response.setEncoding("utf8");
      let buffer = "";
      let first = true;
      response.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (event.startsWith(":")) continue;
          if (first) {
            first = false;
            resolve(response);
          } else onEvent(event);
        }
      });
    });
    req.end(body);
  });
}

const MODERN_VERSION = REQUEST_HEADERS["mcp-protocol-version"]!;

/** A `subscriptions/listen` stream for tools list changes on `port`. */
export function openListen(
  port: number,
  id: number,
  onEvent?: (event: string) => void,
): Promise<IncomingMessage> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: `listen-${id}`,
    method: "subscriptions/listen",
    params: {
      notifications: { toolsListChanged: true },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_VERSION,
    "mcp-method": "subscriptions/listen",
  };
  return openSse(port, "POST", headers, body, onEvent);
}

/** The GET stream of legacy session `session` on `port`. */
export function openGet(
  port: number,
  session: string,
  onEvent?: (event: string) => void,
): Promise<IncomingMessage> {
  const headers = {
    accept: "text/event-stream",
    "mcp-protocol-version": LEGACY_VERSION,
    "mcp-session-id": session,
  };
  return openSse(port, "GET", headers, undefined, onEvent);
}

/** Runs `open` for 0..count-1, {@link OPENING} at a time. */
export async function openAll<T>(count: number, open: (i: number) => Promise<T>): Promise<T[]> {
  const opened: T[] = [];
  for (let start = 0; start < count; start += OPENING) {
    const batch = Array.from({ length: Math.min(OPENING, count - start) }, (_, k) =>
      open(start + k),
    );
    opened.push(...(await Promise.all(batch)));
  }
  return opened;
}

/** Ends every stream and gives the servers a moment to let go of them. */
export async function closeAll(responses: readonly IncomingMessage[]): Promise<void> {
  for (const response of responses) response.destroy();
  await new Promise((resolve) => setTimeout(resolve, 500));
}
