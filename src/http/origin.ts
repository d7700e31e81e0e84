const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

function hostnameOf(host: string): string {
  return host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : (host.split(":")[0] ?? "");
}

/**
 * Whether a request's Origin may reach the server (DNS rebinding protection, spec: transports).
 * Without a configured list: same-origin requests, and loopback origins on a loopback host.
 */
export function isOriginAllowed(
  origin: string | null,
  host: string | null,
  allowed: readonly string[] | "*" | undefined,
): boolean {
  if (origin === null) return true;
  if (allowed === "*") return true;
  if (allowed) return allowed.includes(origin);
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (host !== null && url.host === host) return true;
  return LOOPBACK.has(url.hostname) && host !== null && LOOPBACK.has(hostnameOf(host));
}
