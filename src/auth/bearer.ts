import type { JsonObject } from "../protocol/messages.js";
import type { AuthInfo, McpAuth, TokenVerdict } from "./types.js";

/** Thrown by a `verify` function to reject a token with a reason the client may read. */
export class InvalidTokenError extends Error {
  constructor(description: string) {
    super(description);
    this.name = "InvalidTokenError";
  }
}

/** Options shared by {@link bearerAuth} and `jwtAuth`. */
export interface ResourceServerOptions {
  /**
   * Canonical URL of the MCP endpoint (RFC 8707), e.g. "https://api.example.com/mcp"; set it
   * behind a proxy that terminates TLS. @default derived from each request's URL
   */
  resource?: string;
  /** Scopes this resource knows, advertised as `scopes_supported`. @default [] */
  scopesSupported?: string[];
  /** Scopes every request needs (403 `insufficient_scope` without them). @default [] */
  requiredScopes?: string[];
  /** List only the tools, prompts and resources the principal has the scopes for. @default false */
  hideUnauthorized?: boolean;
  /** Hand the raw token to handlers as `ctx.auth.token`. @default false */
  exposeToken?: boolean;
  /** Human-readable name of the resource (RFC 9728 `resource_name`). */
  resourceName?: string;
  /** URL of documentation for developers (RFC 9728 `resource_documentation`). */
  resourceDocumentation?: string;
}

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions extends ResourceServerOptions {
  /**
   * Checks a token (introspection, an opaque-token lookup, ...) and returns its principal (its
   * `subject`, else its `clientId`, names it: neither is 401), or undefined (or throws
   * {@link InvalidTokenError}) when it is not valid. Any other throw means
   * the check could not be made: the client gets 503 and may retry.
   */
  verify: (
    token: string,
    context: { resource: string },
  ) => AuthInfo | undefined | Promise<AuthInfo | undefined>;
  /** Issuers of tokens for this resource (RFC 9728 `authorization_servers`). */
  authorizationServers: string[];
}

function isHttpsOrLoopback(url: string): boolean {
  try {
    const { protocol, hostname } = new URL(url);
    return (
      protocol === "https:" ||
      (protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(hostname))
    );
  } catch {
    return false;
  }
}

/** Checks options shared by every auth layer; bad configuration throws at construction. */
export function checkResourceOptions(options: ResourceServerOptions): void {
  if (options.resource !== undefined) {
    const url = new URL(options.resource);
    if (url.hash || url.search) throw new TypeError("resource must not have a query or fragment");
  }
  for (const scope of [...(options.scopesSupported ?? []), ...(options.requiredScopes ?? [])]) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) throw new TypeError(`Invalid scope: ${scope}`);
  }
}

/**
 * Bearer-token auth around any verification function: the same challenges, metadata and
 * principal binding as `jwtAuth`, for opaque tokens or token introspection.
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 * import { bearerAuth, InvalidTokenError } from "mcp-mount/auth";
 *
 * type StoredToken = { user: string; revoked: boolean };
 * declare function findToken(token: string): Promise<StoredToken | undefined>;
 *
 * const mcp = createMcpHandler(server, {
 *   auth: bearerAuth({
 *     authorizationServers: ["https://auth.example.com"],
 *     async verify(token) {
 *       const found = await findToken(token); // the app's token table, or RFC 7662 introspection
 *       if (found?.revoked) throw new InvalidTokenError("The access token was revoked");
 *       return found && { subject: found.user, scopes: ["notes:read"] };
 *     },
 *   }),
 * });
 * ```
 */
export function bearerAuth(options: BearerAuthOptions): McpAuth {
  checkResourceOptions(options);
  if (options.authorizationServers.length === 0)
    throw new TypeError("authorizationServers must name at least one issuer");
  for (const server of options.authorizationServers) {
    if (!isHttpsOrLoopback(server))
      throw new TypeError(`Authorization server must be an https URL: ${server}`);
  }
  const scopesSupported = options.scopesSupported ?? [];
  const requiredScopes = options.requiredScopes ?? [];
  return {
    resource: options.resource,
    requiredScopes,
    challengeScopes: requiredScopes.length > 0 ? requiredScopes : scopesSupported,
    hideUnauthorized: options.hideUnauthorized ?? false,
    async verify(token, resource): Promise<TokenVerdict> {
      let auth: AuthInfo | undefined;
      try {
        auth = await options.verify(token, { resource });
      } catch (error) {
        if (error instanceof InvalidTokenError) return { valid: false, description: error.message };
        throw error;
      }
      if (!auth) return { valid: false, description: "The access token is not valid" };
      // Like jwtAuth: a client-credentials token's client is its subject. A principal naming
      // nobody would share sessions, tasks and requestState with every other such principal.
      const subject = auth.subject || auth.clientId;
      if (!subject)
        return { valid: false, description: "The access token names no subject or client" };
      const verified: AuthInfo = { ...auth, subject, scopes: [...auth.scopes] };
      if (options.exposeToken) verified.token = token;
      else delete verified.token;
      return { valid: true, auth: verified };
    },
    metadata(resource) {
      const document: JsonObject = {
        resource,
        authorization_servers: [...options.authorizationServers],
        bearer_methods_supported: ["header"],
      };
      if (scopesSupported.length > 0) document.scopes_supported = [...scopesSupported];
      if (options.resourceName !== undefined) document.resource_name = options.resourceName;
      if (options.resourceDocumentation !== undefined)
        document.resource_documentation = options.resourceDocumentation;
      return document;
    },
  };
}
