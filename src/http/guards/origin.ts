import { isLoopbackAddress } from "./ip-address.js";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

function hostnameOf(host: string): string {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const colon = host.indexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

/** True for an address or host name that stays on this machine. */
export function isLoopback(address: string): boolean {
  return LOOPBACK.has(address) || isLoopbackAddress(address);
}

/** An IPv4 or bracketed IPv6 literal: a rebinding attack always sends a name it controls. */
const IP_LITERAL = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;

/**
 * Whether the Host header names this server (DNS rebinding protection). With a list, the host
 * (or its name without the port) must be on it; without one, a server reached on a loopback
 * address only answers to loopback names and IP literals, so a rebound public name cannot reach
 * it (as Vite's dev server decides).
 */
export function isHostAllowed(
  host: string | null,
  localAddress: string | undefined,
  allowed: readonly string[] | undefined,
): boolean {
  if (allowed)
    return host !== null && (allowed.includes(host) || allowed.includes(hostnameOf(host)));
  // A client sends the same Host again and again: the last verdict, compared as text, is cheaper
  // than the name's parse and lookups.
  const last = lastLoopbackVerdict;
  if (host === last.host && localAddress === last.localAddress) return last.verdict;
  const verdict = loopbackVerdict(host, localAddress);
  lastLoopbackVerdict = { host, localAddress, verdict };
  return verdict;
}

let lastLoopbackVerdict: {
  host: string | null;
  localAddress: string | undefined;
  verdict: boolean;
} = { host: null, localAddress: undefined, verdict: true };

/** Without a list: a loopback socket answers loopback names and IP literals only. */
function loopbackVerdict(host: string | null, localAddress: string | undefined): boolean {
  if (localAddress === undefined || !isLoopback(localAddress)) return true;
  if (host === null) return false;
  const name = hostnameOf(host).toLowerCase();
  return LOOPBACK.has(name) || IP_LITERAL.test(name);
}

/**
 * Which browser origins may call the endpoint (its Origin check and its CORS answers): `"*"` for
 * any; a list of exact origins (`"https://app.example.com"`) or patterns; or a function deciding
 * each origin, which may be async (a lookup in the app's database, say).
 */
export type AllowedOrigins =
  | "*"
  | readonly (string | RegExp)[]
  | ((origin: string) => boolean | Promise<boolean>);

/**
 * Whether a request's Origin may reach the server (spec: transports, security). Without a
 * configured list: same-origin requests, and loopback origins on a loopback host. A request
 * without Origin (no browser sent it) is allowed. A function's answer may be a promise.
 */
export function isOriginAllowed(
  origin: string | null,
  host: string | null,
  allowed: AllowedOrigins | undefined,
): boolean | Promise<boolean> {
  if (origin === null || allowed === "*") return true;
  if (typeof allowed === "function") return allowed(origin);
  if (allowed)
    return allowed.some((entry) =>
      typeof entry === "string" ? entry === origin : testPattern(entry, origin),
    );
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (host !== null && url.host === host) return true;
  return LOOPBACK.has(url.hostname) && host !== null && LOOPBACK.has(hostnameOf(host));
}

/** A pattern's verdict; a global or sticky pattern keeps no state between requests. */
function testPattern(pattern: RegExp, origin: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(origin);
}

/**
 * Checks an allowed-origins list once, when the endpoint is created: each string must be an
 * origin as browsers send it (RFC 6454 §6.2: lower-case scheme and host, no default port, no
 * path, no trailing slash), else it would never match and the pages it names would be refused
 * without a word. `"null"` is taken as written.
 */
export function checkAllowedOrigins(allowed: AllowedOrigins | undefined): void {
  if (allowed === undefined || allowed === "*" || typeof allowed === "function") return;
  for (const entry of allowed) {
    if (typeof entry !== "string" || entry === "null") continue;
    const serialized = serializedOrigin(entry);
    if (serialized === entry) continue;
    const hint = serialized === undefined ? "" : ` (did you mean "${serialized}"?)`;
    throw new TypeError(
      `allowedOrigins: "${entry}" is not an origin as browsers send it (scheme://host[:port])${hint}`,
    );
  }
}

/** The origin a browser would send for a page at `url`, or undefined when it names none. */
function serializedOrigin(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol === "http:" || parsed.protocol === "https:") return parsed.origin;
  // Extension pages (chrome-extension://id): URL gives such schemes an opaque "null" origin.
  return parsed.host === "" ? undefined : `${parsed.protocol}//${parsed.host}`;
}
