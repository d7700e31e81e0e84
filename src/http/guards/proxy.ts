import type { McpHttpRequest } from "../types.js";

/**
 * How many proxies in front of the endpoint set `X-Forwarded-*` headers that may be believed:
 * `true` is one, a number that many, `false` or unset none (the headers are ignored, since any
 * client can send them).
 */
export type TrustProxy = boolean | number;

/** The number of trusted proxy hops a `trustProxy` setting means. */
export function proxyHops(trust: TrustProxy | undefined): number {
  if (trust === true) return 1;
  if (typeof trust === "number" && Number.isInteger(trust) && trust >= 0) return trust;
  if (trust === undefined || trust === false) return 0;
  throw new TypeError(`trustProxy must be a boolean or a whole number of proxies, not ${trust}`);
}

/**
 * The entries of a forwarded header, left to right: each proxy appends what it saw, so only the
 * last `hops` were written by trusted proxies; anything left of them came from the client.
 */
function entries(value: string | null): string[] {
  if (value === null) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/** The value the outermost trusted proxy wrote (the `hops`-th from the right), if any. */
function trustedValue(value: string | null, hops: number): string | undefined {
  const list = entries(value);
  return list.length >= hops ? list[list.length - hops] : undefined;
}

/**
 * The client's address: the socket's peer without trusted proxies, else the entry of
 * `X-Forwarded-For` that the outermost trusted proxy appended (counted from the right, so
 * entries a client made up are never taken).
 */
export function clientAddressOf(req: McpHttpRequest, hops: number): string | undefined {
  if (hops === 0) return req.remoteAddress;
  // Fewer entries than trusted proxies: misconfigured; the socket's peer at least is real.
  return trustedValue(req.header("x-forwarded-for"), hops) ?? req.remoteAddress;
}

/**
 * The request as the client addressed it, when trusted proxies say so: its URL carries the
 * forwarded host and protocol, and `host` reads the forwarded host, so the Host and Origin checks
 * and the auth resource URL see the public name instead of the proxy's upstream address.
 */
export function asForwarded(req: McpHttpRequest, hops: number): McpHttpRequest {
  const host = trustedValue(req.header("x-forwarded-host"), hops);
  const proto = trustedValue(req.header("x-forwarded-proto"), hops)?.toLowerCase();
  if (host === undefined && proto !== "http" && proto !== "https") return req;
  const received = new URL(req.url);
  const scheme = proto === "http" || proto === "https" ? proto : received.protocol.slice(0, -1);
  // The forwarded host replaces host and port both (X-Forwarded-Port is not read: Next.js sets
  // it to its own port).
  const url = `${scheme}://${host ?? received.host}${received.pathname}${received.search}`;
  try {
    new URL(url);
  } catch {
    return req; // a malformed forwarded host is no public name
  }
  const publicHost = host ?? req.header("host");
  // Only the URL and the Host header change: the rest (the target, a path; the app's context,
  // the socket's facts, the disconnect) is the request's own.
  return {
    method: req.method,
    url,
    header: (name) => (name === "host" ? publicHost : req.header(name)),
    body: (limit) => req.body(limit),
    get signal() {
      return req.signal;
    },
    get aborted() {
      return req.aborted;
    },
    ...(req.onAbort && { onAbort: (listener: () => void) => req.onAbort!(listener) }),
    ...(req.target !== undefined && { target: req.target }),
    ...(req.context && { context: req.context }),
    ...(req.localAddress !== undefined && { localAddress: req.localAddress }),
    ...(req.remoteAddress !== undefined && { remoteAddress: req.remoteAddress }),
    ...(req.remotePort !== undefined && { remotePort: req.remotePort }),
    ...(req.httpVersion !== undefined && { httpVersion: req.httpVersion }),
  };
}
