import type { IncomingMessage } from "node:http";
import { LEGACY_VERSION, REQUEST_HEADERS } from "../request.js";
import { openSse } from "../sse.js";

export { openAll, openSse } from "../sse.js";

// The capacity benchmark's idle streams: a modern listen stream or a legacy session's GET stream.

/** Which kind of idle stream: a modern `subscriptions/listen` or a legacy session's GET. */
export type StreamKind = "listen" | "get";

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

/** Ends every stream and gives the servers a moment to let go of them. */
export async function closeAll(responses: readonly IncomingMessage[]): Promise<void> {
  for (const response of responses) response.destroy();
  await new Promise((resolve) => setTimeout(resolve, 500));
}
