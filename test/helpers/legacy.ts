import { type RawResponse, readMessages, type Send } from "./modern.js";
import { assertLegacyMessage } from "./spec.js";

export const LEGACY_VERSION = "2025-11-25";

/** Headers of a legacy request in a session. */
export function legacyHeaders(
  sessionId?: string,
  version = LEGACY_VERSION,
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": version,
  };
  if (sessionId) headers["mcp-session-id"] = sessionId;
  return headers;
}

/** A parsed legacy exchange, every message validated against the 2025-11-25 schema. */
export interface LegacyExchange {
  status: number;
  headers: Headers;
  messages: Record<string, unknown>[];
  response: Record<string, unknown>;
  result: Record<string, unknown>;
  error: { code: number; message: string } | undefined;
}

/** Parses a legacy response body (JSON or SSE), validating each message. */
export function readLegacy(response: RawResponse, method: string): LegacyExchange {
  const messages = readMessages(response, method, assertLegacyMessage);
  const last = messages.at(-1) ?? {};
  return {
    status: response.status,
    headers: response.headers,
    messages,
    response: last,
    result: (last.result ?? {}) as Record<string, unknown>,
    error: last.error as LegacyExchange["error"],
  };
}

let nextId = 1;

/** Opens a session and acknowledges it; returns the session id. */
export async function openSession(
  send: Send,
  capabilities: Record<string, unknown> = {},
  version = LEGACY_VERSION,
): Promise<string> {
  const response = await send({
    method: "POST",
    headers: legacyHeaders(undefined, version),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities,
        clientInfo: { name: "legacy-tests", version: "0.0.0" },
      },
    }),
  });
  const exchange = readLegacy(response, "initialize");
  const sessionId = response.headers.get("mcp-session-id");
  if (exchange.status !== 200 || !sessionId)
    throw new Error(`initialize failed: ${response.status} ${response.text}`);
  const initialized = await send({
    method: "POST",
    headers: legacyHeaders(sessionId, version),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  if (initialized.status !== 202)
    throw new Error(`notifications/initialized answered ${initialized.status}`);
  return sessionId;
}

/** Sends one request in a session and returns the validated exchange. */
export async function legacyCall(
  send: Send,
  sessionId: string | undefined,
  method: string,
  params?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<LegacyExchange> {
  const body: Record<string, unknown> = { jsonrpc: "2.0", id: nextId++, method };
  if (params) body.params = params;
  const response = await send({
    method: "POST",
    headers: { ...legacyHeaders(sessionId), ...headers },
    body: JSON.stringify(body),
  });
  return readLegacy(response, method);
}
