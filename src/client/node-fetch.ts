import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { toResponse } from "./node-response.js";

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
  // An idle socket is let go after 4 s (or sooner when the server's Keep-Alive says so), as
  // undici does, so a request is not sent on a socket the server is closing.
  const httpAgent = options.httpAgent ?? new HttpAgent({ keepAlive: true, timeout: IDLE_MS });
  const httpsAgent = options.httpsAgent ?? new HttpsAgent({ keepAlive: true, timeout: IDLE_MS });
  const fallback = options.fallback ?? ((input, init) => globalThis.fetch(input, init));
  return (input, init) => {
    const url = typeof input === "string" ? parseUrl(input) : input instanceof URL ? input : null;
    const body = init?.body;
    if (!url || !takes(url, init) || !(body == null || typeof body === "string" || isBytes(body))) {
      return fallback(input, init);
    }
    const secure = url.protocol === "https:";
    return send(url, init, secure ? httpsAgent : httpAgent, secure).then((sent) =>
      sent instanceof Response ? sent : fallback(sent.location, sent.init),
    );
  };
}

/** How long an idle keep-alive socket is kept. */
const IDLE_MS = 4_000;

/** How long a request may go without a byte either way, as Node's fetch allows. */
const SILENCE_MS = 300_000;

/** A request for the fallback: a redirect fetch follows, or one this fetch does not send. */
interface Redirect {
  location: URL;
  init: RequestInit;
}

function parseUrl(text: string, base?: URL): URL | null {
  try {
    return new URL(text, base);
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
 * Sends one request; resolves to its Response, or to the request the fallback is to send (a
 * redirect fetch would follow, which it follows further; or one asking for compression).
 */
function send(
  url: URL,
  init: RequestInit | undefined,
  agent: HttpAgent,
  secure: boolean,
): Promise<Response | Redirect> {
  const signal = init?.signal ?? undefined;
  return new Promise((resolve, reject) => {
    // Inside the executor: a bad header or an aborted signal rejects, as fetch does, not throws.
    signal?.throwIfAborted();
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    headers.accept ??= "*/*";
    // A body the caller asked to be compressed is fetch's to decode: it knows every coding.
    if (headers["accept-encoding"] !== undefined)
      return resolve({ location: url, init: init ?? {} });
    const method = init?.method ?? "GET";
    const request = (secure ? httpsRequest : httpRequest)(url, { method, headers, agent });
    request.setTimeout(SILENCE_MS, () =>
      request.destroy(new Error(`no data for ${SILENCE_MS / 1000} s`)),
    );
    const onAbort = () => request.destroy(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    request.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    });
    request.once("response", (message) => {
      signal?.removeEventListener("abort", onAbort);
      const redirect = redirectOf(url, init, message.statusCode ?? 0, message.headers.location);
      if (redirect) {
        message.resume();
        if (redirect === "error") reject(new TypeError("fetch failed: a redirect not followed"));
        else resolve(redirect);
        return;
      }
      toResponse(message, method === "HEAD", signal).then(resolve, reject);
    });
    request.end(init?.body as string | Uint8Array | undefined);
  });
}

/** Headers that describe a request's body: dropped when a redirect drops the body. */
const BODY_HEADERS = ["content-encoding", "content-language", "content-location", "content-type"];

/**
 * The request fetch sends after a redirect (WHATWG fetch, HTTP-redirect fetch): 303, or 301 and
 * 302 after a POST, become a GET without a body; 307 and 308 keep both; `Authorization` never
 * goes to another origin. Undefined when the answer is no redirect to follow.
 */
function redirectOf(
  url: URL,
  init: RequestInit | undefined,
  status: number,
  location: string | undefined,
): Redirect | "error" | undefined {
  const redirects =
    status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
  if (!redirects || location === undefined || init?.redirect === "manual") return undefined;
  const target = parseUrl(location, url);
  if (init?.redirect === "error" || !target) return "error";
  const method = (init?.method ?? "GET").toUpperCase();
  const headers = new Headers(init?.headers);
  const next: RequestInit = { ...init, headers };
  if (
    (status === 303 && method !== "GET" && method !== "HEAD") ||
    (status <= 302 && method === "POST")
  ) {
    next.method = "GET";
    next.body = null;
    for (const name of BODY_HEADERS) headers.delete(name);
  }
  if (target.origin !== url.origin) headers.delete("authorization");
  return { location: target, init: next };
}
