import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";

/** Options of {@link nodeFetch}. */
export interface NodeFetchOptions {
  /** The agent for `http:` URLs. @default a keep-alive agent of this fetch's own */
  httpAgent?: HttpAgent;
  /** The agent for `https:` URLs. @default a keep-alive agent of this fetch's own */
  httpsAgent?: HttpsAgent;
  /** What it hands every request it does not take itself (see below). @default globalThis.fetch */
  fallback?: typeof fetch;
}

/**
 * A `fetch` for McpClient on Node, over `node:http` and `node:https` with keep-alive agents:
 * the client's HTTP costs about half the CPU of Node's built-in fetch (undici), which on a
 * loopback or in-cluster server is most of what a call costs. It takes what the MCP transport
 * sends (a URL, a method, headers, a string or byte body, a signal); anything else (a `Request`
 * object, a streamed or form body, a redirect to follow, `credentials` or `cache` options) goes
 * to `fallback` unchanged, so it behaves as fetch does. It asks for no compression.
 *
 * @example
 * ```ts
 * import { McpClient } from "mcp-mount/client";
 * import { nodeFetch } from "mcp-mount/client/node";
 *
 * const client = await McpClient.connect("http://127.0.0.1:3000/mcp", { fetch: nodeFetch() });
 * ```
 */
export function nodeFetch(options: NodeFetchOptions = {}): typeof fetch {
  const httpAgent = options.httpAgent ?? new HttpAgent({ keepAlive: true });
  const httpsAgent = options.httpsAgent ?? new HttpsAgent({ keepAlive: true });
  const fallback = options.fallback ?? ((input, init) => globalThis.fetch(input, init));
  return (input, init) => {
    const url = typeof input === "string" ? parseUrl(input) : input instanceof URL ? input : null;
    const body = init?.body;
    if (!url || !takes(url, init) || !(body == null || typeof body === "string" || isBytes(body))) {
      return fallback(input, init);
    }
    const secure = url.protocol === "https:";
    return send(url, init, secure ? httpsAgent : httpAgent, secure).then(
      (response) => response ?? fallback(input, init),
    );
  };
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function isBytes(body: unknown): body is Uint8Array {
  return body instanceof Uint8Array;
}

/** Whether the request is one this fetch sends itself. */
function takes(url: URL, init: RequestInit | undefined): boolean {
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  if (url.username || url.password) return false;
  if (!init) return true;
  return (
    init.credentials === undefined &&
    init.cache === undefined &&
    init.mode === undefined &&
    init.integrity === undefined &&
    init.window == null
  );
}

/**
 * Sends one request; resolves to its Response, or to undefined for a redirect fetch must follow
 * (the caller then hands the request to the fallback).
 */
function send(
  url: URL,
  init: RequestInit | undefined,
  agent: HttpAgent,
  secure: boolean,
): Promise<Response | undefined> {
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  headers.accept ??= "*/*";
  return new Promise((resolve, reject) => {
    const request = (secure ? httpsRequest : httpRequest)(url, {
      method: init?.method ?? "GET",
      headers,
      agent,
    });
    const onAbort = () => request.destroy(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    request.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    });
    request.once("response", (message) => {
      signal?.removeEventListener("abort", onAbort);
      const status = message.statusCode ?? 0;
      if (isRedirect(status) && message.headers.location && init?.redirect !== "manual") {
        message.resume();
        resolve(undefined);
        return;
      }
      toResponse(message, init?.method === "HEAD", signal).then(resolve, reject);
    });
    request.end(init?.body as string | Uint8Array | undefined);
  });
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/**
 * The Response for a Node answer: an SSE stream (or any body of unknown length) streams; a
 * body of known length is read whole first, which costs less than a stream per answer. An abort
 * from here on ends the body with the signal's reason, as fetch's does.
 */
async function toResponse(
  message: IncomingMessage,
  head: boolean,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const status = message.statusCode ?? 0;
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const init = { status, statusText: message.statusMessage ?? "", headers };
  if (head || status === 204 || status === 304) {
    message.resume();
    return new Response(null, init);
  }
  const onAbort = () => message.destroy(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  message.once("close", () => signal?.removeEventListener("abort", onAbort));
  const type = message.headers["content-type"] ?? "";
  if (message.headers["content-length"] === undefined || type.startsWith("text/event-stream")) {
    return new Response(Readable.toWeb(message) as ReadableStream<Uint8Array>, init);
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of message) chunks.push(chunk as Buffer);
  } catch (error) {
    throw signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error });
  }
  if (!message.complete) throw new TypeError("fetch failed: the answer was cut short");
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  // A Buffer's memory is a plain ArrayBuffer (never shared), which is what BodyInit takes.
  const view = new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
  return new Response(view, init);
}
