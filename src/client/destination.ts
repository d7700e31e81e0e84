import type { Destination } from "../telemetry/client-operation.js";
import type { Wire } from "./wire.js";

/**
 * Where a session's messages go, as its CLIENT spans name it: `pipe` for stdio, else `tcp` with
 * the host and port of the wire's URL; the protocol version and session id once known.
 */
export function destinationOf(wire: Wire, protocolVersion: string | undefined): Destination {
  const destination: Destination = { transport: wire.kind === "stdio" ? "pipe" : "tcp" };
  const url = "url" in wire && wire.url instanceof URL ? wire.url : undefined;
  if (url) {
    // An IPv6 host is bracketed in URLs; server.address takes the bare address.
    destination.serverAddress = url.hostname.replace(/^\[(.*)\]$/, "$1");
    destination.serverPort = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  }
  if (protocolVersion) destination.protocolVersion = protocolVersion;
  if (wire.sessionId) destination.sessionId = wire.sessionId;
  return destination;
}
