import type { Dispatcher } from "undici";
import {
  INITIALIZE_BODY,
  INITIALIZE_HEADERS,
  INITIALIZED_BODY,
  LEGACY_HEADERS,
  LEGACY_VERSION,
  legacyRequestBody,
  MCP_PATH,
  REQUEST_HEADERS,
  requestBody,
} from "./request.js";

/** One load slot's setup: the headers of its requests, and how to release what it opened. */
export interface Slot {
  headers: Record<string, string>;
  close(): Promise<void>;
}

/** The traffic a contender gets: how each slot starts, and the tools/call it then sends. */
export interface Workload {
  /** Sets up one slot on `client`, outside any timed window. */
  open(client: Dispatcher): Promise<Slot>;
  /** The tools/call body with JSON-RPC id `id`. */
  body(id: number): string;
}

/** Modern (2026-07-28) tools/call: no setup, everything in each request. */
export const modernWorkload: Workload = {
  open: async () => ({ headers: REQUEST_HEADERS, close: async () => {} }),
  body: requestBody,
};

async function send(
  client: Dispatcher,
  step: string,
  options: { method: "POST" | "DELETE"; headers: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Dispatcher.ResponseData["headers"]; text: string }> {
  const response = await client.request({ path: MCP_PATH, ...options });
  const text = await response.body.text();
  if (response.statusCode < 200 || response.statusCode > 299) {
    throw new Error(`${step} failed: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
  }
  return { status: response.statusCode, headers: response.headers, text };
}

/**
 * Legacy (2025-11-25) tools/call: each slot opens its own session (initialize, then
 * notifications/initialized), sends every request with its `mcp-session-id`, and DELETEs the
 * session when the run ends.
 */
export const legacyWorkload: Workload = {
  async open(client) {
    const init = await send(client, "initialize", {
      method: "POST",
      headers: INITIALIZE_HEADERS,
      body: INITIALIZE_BODY,
    });
    const sessionId = init.headers["mcp-session-id"];
    if (typeof sessionId !== "string" || !init.text.includes(`"${LEGACY_VERSION}"`)) {
      throw new Error(`initialize gave no ${LEGACY_VERSION} session: ${init.text.slice(0, 300)}`);
    }
    const headers = { ...LEGACY_HEADERS, "mcp-session-id": sessionId };
    const initialized = await send(client, "notifications/initialized", {
      method: "POST",
      headers,
      body: INITIALIZED_BODY,
    });
    if (initialized.status !== 202) {
      throw new Error(`notifications/initialized: expected HTTP 202, got ${initialized.status}`);
    }
    return {
      headers,
      close: async () => {
        await send(client, "DELETE", { method: "DELETE", headers });
      },
    };
  },
  body: legacyRequestBody,
};
