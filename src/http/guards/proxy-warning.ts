import type { McpHttpRequest } from "../types.js";

/** The per-client caps that hold an anonymous caller by its address. */
export interface AddressLimits {
  /** `rateLimit` is set. */
  rateLimit: boolean;
  /** `maxStreamsPerClient`. */
  maxStreamsPerClient: number;
  /** The legacy era's `maxSessionsPerClient`; undefined without the legacy era. */
  maxSessionsPerClient: number | undefined;
}

/** Whether any cap keys anonymous callers by address (an infinite cap keys nobody). */
function anyAddressLimit(limits: AddressLimits): boolean {
  return (
    limits.rateLimit ||
    Number.isFinite(limits.maxStreamsPerClient) ||
    (limits.maxSessionsPerClient !== undefined && Number.isFinite(limits.maxSessionsPerClient))
  );
}

/** What to tell the operator: the header seen, why it matters, the option to set. */
function untrustedProxyMessage(header: "X-Forwarded-For" | "Forwarded"): string {
  const also =
    header === "Forwarded" ? " (trustProxy reads X-Forwarded-For: have the proxy set it)" : "";
  return (
    `mcp-mount: a request carries ${header} but trustProxy is not set, so every anonymous client ` +
    "behind that proxy has the proxy's address and all of them share one client's limits " +
    "(rate-limit budget, open streams, sessions). Set createMcpHandler's trustProxy to the " +
    `number of proxies in front of the endpoint (true for one)${also}.`
  );
}

/**
 * A check, run when an anonymous caller is keyed by its address, that says once per handler
 * (through `warn`) when the request came through a proxy nobody trusts: express-rate-limit's
 * ERR_ERL_UNEXPECTED_X_FORWARDED_FOR, for every per-client cap. A no-op with `trustProxy`, or
 * when no cap keys callers by address.
 */
export function createProxyWarning(
  hops: number,
  limits: AddressLimits,
  warn: (message: string) => void,
): (req: McpHttpRequest) => void {
  if (hops > 0 || !anyAddressLimit(limits)) return () => undefined;
  let warned = false;
  return (req) => {
    if (warned) return;
    const header =
      req.header("x-forwarded-for") !== null
        ? "X-Forwarded-For"
        : req.header("forwarded") !== null
          ? "Forwarded"
          : undefined;
    if (header === undefined) return;
    warned = true;
    warn(untrustedProxyMessage(header));
  };
}
