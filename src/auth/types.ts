import type { JsonObject } from "../protocol/messages.js";

/** The verified caller, when the handler is mounted behind auth. */
export interface AuthInfo {
  issuer?: string;
  subject?: string;
  clientId?: string;
  scopes: string[];
  claims?: JsonObject;
  /** The raw token, only when the auth layer was asked to expose it. */
  token?: string;
}

/** The verdict on one bearer token. */
export type TokenVerdict =
  | { valid: true; auth: AuthInfo }
  /** `description` reaches the client in `error_description`: say why, never echo the token. */
  | { valid: false; description: string };

/**
 * What `createMcpHandler({ auth })` needs from an auth layer: `bearerAuth()` and `jwtAuth()`
 * build one. The handler does the HTTP side (challenges, metadata route, scope checks).
 */
export interface McpAuth {
  /** Canonical URL of the endpoint (RFC 8707); undefined derives it from each request's URL. */
  readonly resource: string | undefined;
  /** Scopes every request needs, whatever it asks for. */
  readonly requiredScopes: readonly string[];
  /** Scopes named in the `scope` parameter of 401 challenges. */
  readonly challengeScopes: readonly string[];
  /** List only what the principal has the scopes for; such lists are `cacheScope: "private"`. */
  readonly hideUnauthorized: boolean;
  /**
   * Verifies a token presented to the endpoint at `resource`. Throws only when it cannot decide
   * (an identity provider unreachable); the client then gets 503, not 401.
   */
  verify(token: string, resource: string): Promise<TokenVerdict>;
  /** The Protected Resource Metadata document (RFC 9728 §2) for the endpoint at `resource`. */
  metadata(resource: string): JsonObject;
  /**
   * The app's own login, from `appAuth()`: tried when a request carries no bearer token.
   * Without `acceptsBearer`, bearer tokens are refused and no OAuth metadata is served.
   */
  readonly app?: AppLogin;
}

/** What the app vouches for: the principal its own login found for a request. */
export interface AppPrincipal {
  /** Who the user is, in the app (a user id). */
  subject: string;
  /** Whose ids these are, so they never collide with a token's issuer. @default "app" */
  issuer?: string;
  /** What the user may do, checked against each tool's, prompt's and resource's `scopes`. */
  scopes?: string[];
  claims?: JsonObject;
}

/** The part of a request the app's principal function may read. */
export interface AppAuthRequest {
  readonly method: string;
  readonly url: string;
  /** A header value by lower-case name, or null. */
  header(name: string): string | null;
}

/** How an auth layer takes the principal from the app (see `appAuth`). */
export interface AppLogin {
  principal(req: AppAuthRequest, app: unknown): Promise<AuthInfo | undefined>;
  /** Bearer tokens are accepted too (and checked first when a request carries one). */
  readonly acceptsBearer: boolean;
  /** The 401 for a caller with neither: its JSON-RPC message and extra headers. */
  readonly unauthenticated: { message: string; headers: Record<string, string> };
}
