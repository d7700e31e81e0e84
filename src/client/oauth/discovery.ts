import { isObject, type JsonObject } from "../../protocol/messages.js";
import type { BearerChallenge } from "./challenge.js";
import { OAuthError } from "./types.js";

/** Authorization server metadata (RFC 8414), as oauth4webapi takes it. */
export type ServerMetadata = JsonObject & { issuer: string };

/** What discovery found for one MCP server. */
export interface Discovery {
  /** The `resource` to name in every authorization and token request (RFC 8707). */
  resource: string;
  /** Scopes the protected resource metadata lists (RFC 9728 `scopes_supported`). */
  scopesSupported: string[] | undefined;
  server: ServerMetadata;
}

function wellKnown(url: URL, suffix: string, position: "insert" | "append"): URL {
  const path = url.pathname.replace(/\/$/, "");
  const at = new URL(url.origin);
  at.pathname =
    position === "insert" ? `/.well-known/${suffix}${path}` : `${path}/.well-known/${suffix}`;
  return at;
}

async function getJson(url: URL, fetcher: typeof fetch): Promise<JsonObject | undefined> {
  // A server that cannot be reached is one more place without the document.
  const response = await fetcher(url, { headers: { accept: "application/json" } }).catch(
    () => undefined,
  );
  if (!response?.ok) {
    await response?.body?.cancel();
    return undefined;
  }
  const body: unknown = await response.json().catch(() => undefined);
  return isObject(body) ? body : undefined;
}

/**
 * True when `resource` may stand for the server at `serverUrl`: same origin, and a path the
 * server's lies under (RFC 9728 §3.3, 7.3; MCP: canonical server URI).
 */
function covers(resource: string, serverUrl: URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(resource);
  } catch {
    return false;
  }
  if (parsed.origin !== serverUrl.origin || parsed.hash) return false;
  const base = parsed.pathname.endsWith("/") ? parsed.pathname : `${parsed.pathname}/`;
  return parsed.pathname === "/" || `${serverUrl.pathname}/`.startsWith(base);
}

/**
 * Protected Resource Metadata: the challenge's `resource_metadata`, else the path-based
 * well-known URI, else the root one (MCP: authorization server discovery).
 */
async function resourceMetadata(
  serverUrl: URL,
  challenge: BearerChallenge | undefined,
  fetcher: typeof fetch,
): Promise<JsonObject | undefined> {
  const candidates = challenge?.resourceMetadata
    ? [new URL(challenge.resourceMetadata, serverUrl)]
    : [
        ...(serverUrl.pathname === "/"
          ? []
          : [wellKnown(serverUrl, "oauth-protected-resource", "insert")]),
        new URL("/.well-known/oauth-protected-resource", serverUrl.origin),
      ];
  for (const url of candidates) {
    const document = await getJson(url, fetcher);
    if (document) return document;
  }
  return undefined;
}

/**
 * Authorization server metadata: RFC 8414 and OpenID Connect discovery in the order MCP gives
 * (path insertion for both, then OIDC path appending). The document's `issuer` must be the
 * identifier it was looked up with, character for character, or it is refused.
 */
export async function serverMetadata(
  issuer: string,
  fetcher: typeof fetch,
): Promise<ServerMetadata> {
  const url = new URL(issuer);
  const hasPath = url.pathname !== "/" && url.pathname !== "";
  const candidates = [
    wellKnown(url, "oauth-authorization-server", "insert"),
    wellKnown(url, "openid-configuration", "insert"),
    ...(hasPath ? [wellKnown(url, "openid-configuration", "append")] : []),
  ];
  for (const candidate of candidates) {
    const document = await getJson(candidate, fetcher);
    if (!document) continue;
    if (document.issuer !== issuer) {
      throw new OAuthError(
        `The authorization server metadata at ${candidate.href} names another issuer than ${issuer}`,
      );
    }
    return document as ServerMetadata;
  }
  throw new OAuthError(`No authorization server metadata found for ${issuer}`);
}

/** The endpoints a 2025-03-26 server without metadata has at its root. */
async function legacyServer(serverUrl: URL, fetcher: typeof fetch): Promise<ServerMetadata> {
  const issuer = serverUrl.origin;
  try {
    return await serverMetadata(issuer, fetcher);
  } catch (error) {
    if (!(error instanceof OAuthError) || !error.message.startsWith("No ")) throw error;
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      // 2025-03-26 made PKCE mandatory for every client and server.
      code_challenge_methods_supported: ["S256"],
    };
  }
}

/**
 * Finds the authorization server of the MCP server at `serverUrl` after a 401 or 403. A
 * server without resource metadata is treated as the 2025-03-26 revision did: its origin is
 * the authorization server.
 */
export async function discover(
  serverUrl: URL,
  challenge: BearerChallenge | undefined,
  fetcher: typeof fetch,
): Promise<Discovery> {
  const metadata = await resourceMetadata(serverUrl, challenge, fetcher);
  if (!metadata) {
    const resource = new URL(serverUrl);
    resource.hash = "";
    return {
      resource: resource.href,
      scopesSupported: undefined,
      server: await legacyServer(serverUrl, fetcher),
    };
  }
  const { resource, authorization_servers: servers, scopes_supported: scopes } = metadata;
  if (typeof resource !== "string" || !covers(resource, serverUrl)) {
    throw new OAuthError(
      `The protected resource metadata of ${serverUrl.href} names another resource`,
    );
  }
  const issuer = Array.isArray(servers) ? servers.find((s) => typeof s === "string") : undefined;
  if (typeof issuer !== "string") {
    throw new OAuthError(
      `The protected resource metadata of ${serverUrl.href} names no authorization server`,
    );
  }
  return {
    resource,
    scopesSupported: Array.isArray(scopes)
      ? scopes.filter((s) => typeof s === "string")
      : undefined,
    server: await serverMetadata(issuer, fetcher),
  };
}
