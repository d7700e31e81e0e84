import { request as httpRequest } from "node:http";
import { createParser } from "eventsource-parser";
import { assertModernMessage } from "./spec.js";

/** One HTTP exchange, independent of how it was carried. */
export interface RawRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** What came back. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Sends a raw request: through `fetch` on a handler, a real socket, Express, or Next. */
export type Send = (request: RawRequest) => Promise<RawResponse>;

export const VERSION = "2026-07-28";

/** Headers a modern request for `method` needs, with `name` mirrored into Mcp-Name. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
  };
  if (name !== undefined) headers["mcp-name"] = name;
  return headers;
}

/** The `_meta` every modern request carries. */
export function modernMeta(
  capabilities: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "mcp-mount-tests", version: "0.0.0" },
    ...extra,
  };
}

/** Splits an SSE body into the JSON-RPC messages it carried. */
export function parseSse(text: string): unknown[] {
  const messages: unknown[] = [];
  const parser = createParser({
    onEvent: (event) => event.data && messages.push(JSON.parse(event.data)),
  });
  parser.feed(text);
  return messages;
}

/** A parsed exchange: every message emitted, already validated against the spec schema. */
export interface Exchange {
  status: number;
  headers: Headers;
  messages: Record<string, unknown>[];
  /** The last message: the response to the request. */
  response: Record<string, unknown>;
  result: Record<string, unknown>;
  error: { code: number; message: string; data?: unknown } | undefined;
}

/** The JSON-RPC messages of a response body, JSON or SSE, each checked by `assert`. */
export function readMessages(
  response: RawResponse,
  method: string,
  assert: (message: unknown, method: string) => void,
): Record<string, unknown>[] {
  const type = response.headers.get("content-type") ?? "";
  const messages = (
    type.startsWith("text/event-stream")
      ? parseSse(response.text)
      : response.text
        ? [JSON.parse(response.text)]
        : []
  ) as Record<string, unknown>[];
  for (const message of messages) assert(message, method);
  return messages;
}

/** Parses and validates a response body. */
export function readExchange(response: RawResponse, method: string): Exchange {
  const messages = readMessages(response, method, assertModernMessage);
  const last = messages.at(-1) ?? {};
  return {
    status: response.status,
    headers: response.headers,
    messages,
    response: last,
    result: (last.result ?? {}) as Record<string, unknown>,
    error: last.error as Exchange["error"],
  };
}

let nextId = 1;

/** Options of {@link call}. */
export interface CallOptions {
  capabilities?: Record<string, unknown>;
  meta?: Record<string, unknown>;
  headers?: Record<string, string>;
  id?: string | number;
}

/** Sends one well-formed modern request and returns the validated exchange. */
export async function call(
  send: Send,
  method: string,
  params: Record<string, unknown> = {},
  options: CallOptions = {},
): Promise<Exchange> {
  const name = (params.name ?? params.uri) as string | undefined;
  const named = ["tools/call", "prompts/get", "resources/read"].includes(method) ? name : undefined;
  const body = {
    jsonrpc: "2.0",
    id: options.id ?? nextId++,
    method,
    params: { ...params, _meta: modernMeta(options.capabilities, options.meta) },
  };
  const response = await send({
    method: "POST",
    headers: { ...modernHeaders(method, named), ...options.headers },
    body: JSON.stringify(body),
  });
  return readExchange(response, method);
}

/** A `Send` through a Web fetch handler. */
export function viaFetch(
  fetchHandler: (request: Request) => Promise<Response>,
  url = "http://127.0.0.1/mcp",
): Send {
  return async (request) => {
    const response = await fetchHandler(new Request(url, request));
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

/** A `Send` over a real socket to `url`. */
export function viaUrl(url: string): Send {
  return async (request) => {
    const response = await fetch(url, request);
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

/**
 * A `Send` over a real socket through `node:http`, which (unlike `fetch`) sends the headers it is
 * given as they are, `Host` included: for requests that claim another name.
 */
export function viaNodeHttp(url: string): Send {
  return (request) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: request.method, headers: request.headers }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined)
              headers.set(name, Array.isArray(value) ? value.join(", ") : value);
          resolve({ status: res.statusCode ?? 0, headers, text });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(request.body);
    });
}

/** The same `Send`, with `Authorization: Bearer <token>` on every request. */
export function withBearer(send: Send, token: string): Send {
  return (request) =>
    send({ ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } });
}
