import type { McpHttpRequest } from "./types.js";

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

/** The first value of a forwarded header: the one the outermost proxy set (as Express reads it). */
function firstValue(value: string | null): string | undefined {
  if (value === null) return undefined;
  const first = value.split(",", 1)[0]!.trim();
  return first === "" ? undefined : first;
}

/**
 * The client's address: the socket's peer without trusted proxies, else the entry of
 * `X-Forwarded-For` that the outermost trusted proxy appended (counted from the right, so
 * entries a client made up are never taken).
 */
export function clientAddressOf(req: McpHttpRequest, hops: number): string | undefined {
  if (hops === 0) return req.remoteAddress;
  const chain = (req.header("x-forwarded-for") ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  return chain[chain.length - hops] ?? chain[0] ?? req.remoteAddress;
}

/**
 * The request as the client addressed it, when trusted proxies say so: its URL carries the
 * forwarded host and protocol, and `host` reads the forwarded host, so the Host and Origin checks
 * and the auth resource URL see the public name instead of the proxy's upstream address.
 */
export function asForwarded(req: McpHttpRequest): McpHttpRequest {
  const host = firstValue(req.header("x-forwarded-host"));
  const proto = firstValue(req.header("x-forwarded-proto"))?.toLowerCase();
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
  return {
    method: req.method,
    url,
    header: (name) => (name === "host" ? publicHost : req.header(name)),
    body: (limit) => req.body(limit),
    get signal() {
      return req.signal;
    },
    ...(req.onAbort && { onAbort: (listener: () => void) => req.onAbort!(listener) }),
    ...(req.localAddress !== undefined && { localAddress: req.localAddress }),
    ...(req.remoteAddress !== undefined && { remoteAddress: req.remoteAddress }),
  };
}
