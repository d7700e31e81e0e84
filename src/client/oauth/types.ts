/** Where a client's OAuth state lives: a string per key (tokens per server, clients per issuer). */
export interface OAuthStore {
  get(key: string): Promise<string | undefined> | string | undefined;
  set(key: string, value: string): Promise<void> | void;
  delete(key: string): Promise<void> | void;
}

/** Token endpoint authentication methods the client speaks (RFC 7591 names). */
export type TokenEndpointAuthMethod =
  | "none"
  | "client_secret_basic"
  | "client_secret_post"
  | "private_key_jwt";

/** A client registered with an authorization server beforehand. */
export interface PreRegisteredClient {
  clientId: string;
  /** The secret of a confidential client. */
  clientSecret?: string;
  /** A PKCS #8 PEM private key, or a CryptoKey, for `private_key_jwt`. */
  privateKey?: string | CryptoKey;
  /** JWS algorithm of `privateKey`. @default "ES256" */
  signingAlgorithm?: string;
  /** How to authenticate at the token endpoint. @default from the credentials and what the server supports */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /**
   * The issuer this client belongs to: used only with that authorization server (client ids
   * are not portable across servers). Required with `clientSecret` or `privateKey`, which
   * are never shown to another server. @default any, for a public client
   */
  issuer?: string;
}

/**
 * Enterprise-Managed Authorization (MCP extension, SEP-990): the enterprise identity provider
 * exchanges the user's ID token for an ID-JAG (RFC 8693), which the client presents at the MCP
 * server's authorization server as a JWT-bearer grant (RFC 7523).
 */
export interface EnterpriseOptions {
  /** The issuer of the enterprise identity provider. */
  idpIssuer: string;
  /** The identity provider's token endpoint. @default from its metadata (RFC 8414, OIDC) */
  idpTokenEndpoint?: string;
  /** This client's id at the identity provider. */
  idpClientId: string;
  /** This client's secret at the identity provider. @default none, a public client */
  idpClientSecret?: string;
  /** The user's ID token from the identity provider, or a function getting a fresh one. */
  idToken: string | (() => string | Promise<string>);
  /**
   * The issuer of the MCP server's authorization server: the ID-JAG is asked for it (its
   * `audience`) and sent to no other.
   */
  issuer: string;
}

/** Resolves with the URL the authorization server redirected the user-agent to. */
export type RedirectHandler = (authorizationUrl: URL) => Promise<string | URL>;

/**
 * How `McpClient` signs in to a protected server (MCP authorization, OAuth 2.1).
 *
 * @example
 * ```ts
 * import { McpClient, type OAuthOptions } from "mcp-mount/client";
 * const auth: OAuthOptions = {
 *   redirectUri: "https://app.example.com/oauth/callback",
 *   redirect: (url) => openSignInWindow(url), // resolves with the URL it came back to
 * };
 * const client = await McpClient.connect("https://mcp.example.com/mcp", { auth });
 * declare function openSignInWindow(url: URL): Promise<string>;
 * ```
 */
export interface OAuthOptions {
  /**
   * Sends the user to the authorization URL (a browser, a desktop window) and resolves with
   * the redirect back to `redirectUri`. Needed for the authorization-code grant.
   */
  redirect?: RedirectHandler;
  /** The redirect URI registered for the client, e.g. a loopback listener's. */
  redirectUri?: string;
  /**
   * `"client_credentials"` for a machine client acting on its own behalf; `"jwt_bearer"` for a
   * workload presenting its identity token (RFC 7523, workload identity federation);
   * `"enterprise_managed"` for a user signed in at an enterprise identity provider (`enterprise`).
   * @default "authorization_code"
   */
  grant?: "authorization_code" | "client_credentials" | "jwt_bearer" | "enterprise_managed";
  /** The workload's JWT for `"jwt_bearer"`, or a function getting a fresh one. */
  assertion?: string | (() => string | Promise<string>);
  /**
   * The issuer of the authorization server `assertion` is for: it is sent to no other.
   * @default the issuer or token endpoint its `aud` claim names (RFC 7523 §3)
   */
  assertionIssuer?: string;
  /** The identity provider and authorization server for `"enterprise_managed"`. @default none */
  enterprise?: EnterpriseOptions;
  /** A pre-registered client: used first, when it belongs to the server's issuer. */
  client?: PreRegisteredClient;
  /** An HTTPS URL of the client's metadata document, used as `client_id` where servers support it. */
  clientMetadataUrl?: string;
  /** Name shown to the user by servers that register the client dynamically. @default "mcp-mount client" */
  clientName?: string;
  /** Where tokens and registrations are kept. @default in memory, for this options object */
  store?: OAuthStore;
  /** Re-authorizations for more scope (403 `insufficient_scope`) per request. @default 2 */
  maxStepUps?: number;
  /** Refresh this many seconds before a token expires. @default 60 */
  refreshBeforeExpirySec?: number;
  /**
   * Allow plain HTTP to authorization servers, and a token to an MCP server on plain HTTP.
   * @default only on loopback hosts
   */
  allowInsecureRequests?: boolean;
}

/** Tokens kept for one MCP server (its canonical URI). */
export interface StoredTokens {
  accessToken: string;
  /** `"DPoP"` for a token bound to the client's DPoP key (RFC 9449). @default Bearer */
  tokenType?: "DPoP";
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
  /** The scopes asked for, space-separated. */
  scope?: string;
  /** The authorization server that issued them. */
  issuer: string;
  /** The `resource` they were issued for. */
  resource: string;
}

/** A client identity at one authorization server, as registered or pre-registered. */
export interface StoredClient {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  redirectUri?: string;
}

/**
 * Signing in failed: discovery, registration, the user's answer or the token endpoint. The
 * message never carries a token, code or secret.
 */
export class OAuthError extends Error {
  /** The OAuth error code when the authorization server gave one (e.g. `invalid_grant`). */
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.name = "OAuthError";
    this.code = code;
  }
}
