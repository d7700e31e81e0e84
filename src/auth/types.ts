import type { JsonObject } from "../protocol/messages.js";
import type { AuthInfo } from "../server/types.js";

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
}
