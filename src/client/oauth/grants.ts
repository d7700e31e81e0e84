import type { TokenEndpointResponse } from "oauth4webapi";
import { checkAudience, checkIssuer } from "./binding.js";
import type { Discovery, ServerMetadata } from "./discovery.js";
import { idJagFor } from "./enterprise.js";
import type { ClientIdentity, IdentityContext } from "./identity.js";
import { toOAuthError } from "./load.js";
import { OAuthError, type StoredTokens } from "./types.js";

function stored(
  response: TokenEndpointResponse,
  issuer: string,
  resource: string,
  scope: string | undefined,
  previousRefresh?: string,
): StoredTokens {
  const refreshToken = response.refresh_token ?? previousRefresh;
  return {
    accessToken: response.access_token,
    ...(response.token_type.toLowerCase() === "dpop" ? { tokenType: "DPoP" as const } : {}),
    ...(refreshToken ? { refreshToken } : {}),
    ...(typeof response.expires_in === "number"
      ? { expiresAt: Date.now() + response.expires_in * 1000 }
      : {}),
    ...(scope ? { scope } : {}),
    issuer,
    resource,
  };
}

/** oauth4webapi's options for a token request: fetch, HTTP policy, DPoP. */
function tokenOptions(context: IdentityContext, server: ServerMetadata) {
  return {
    ...context.http(String(server.token_endpoint)),
    ...(context.dpop ? { DPoP: context.dpop } : {}),
  };
}

/** Sends a token request, once more when a DPoP server asks for its nonce (RFC 9449 §8). */
async function withNonceRetry<T>(context: IdentityContext, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (!context.dpop || !context.oauth.isDPoPNonceError(error)) throw error;
    return request();
  }
}

/**
 * One grant's token request: sent (once more for a DPoP nonce) and its answer processed; any
 * failure an {@link OAuthError} saying what was being done, carrying no credential.
 */
async function tokenRequest(
  context: IdentityContext,
  doing: string,
  request: () => Promise<TokenEndpointResponse>,
): Promise<TokenEndpointResponse> {
  try {
    return await withNonceRetry(context, request);
  } catch (error) {
    throw toOAuthError(error, doing);
  }
}

/** The authorization request's URL: PKCE S256, state, `resource` and the scopes chosen. */
function authorizationUrl(
  server: ServerMetadata,
  clientId: string,
  redirectUri: string,
  values: { challenge: string; state: string; resource: string; scope: string | undefined },
): URL {
  const url = new URL(String(server.authorization_endpoint));
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("code_challenge", values.challenge);
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", values.state);
  url.searchParams.set("resource", values.resource);
  if (values.scope) url.searchParams.set("scope", values.scope);
  return url;
}

/**
 * The authorization-code grant with PKCE (S256): the user signs in through `redirect`, the
 * response is checked (state; `iss` per RFC 9207, compared exactly) before the code goes to
 * the token endpoint, with `resource` on both requests (RFC 8707).
 */
export async function authorizationCodeGrant(
  context: IdentityContext,
  identity: ClientIdentity,
  discovery: Discovery,
  scope: string | undefined,
): Promise<StoredTokens> {
  const { oauth, options } = context;
  const { server, resource } = discovery;
  const { redirect, redirectUri } = options;
  if (!redirect || !redirectUri) {
    throw new OAuthError("Signing in needs `redirect` and `redirectUri` (where the user signs in)");
  }
  const methods = server.code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes("S256")) {
    throw new OAuthError(`The authorization server ${server.issuer} does not support PKCE (S256)`);
  }
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const url = authorizationUrl(server, identity.client.client_id, redirectUri, {
    challenge,
    state,
    resource,
    scope,
  });
  // The user is sent there: HTTPS (HTTP on loopback or when allowed), never file: or other
  // schemes a browser opener would hand to the desktop.
  try {
    oauth.checkProtocol(url, context.http(url.href)[oauth.allowInsecureRequests] !== true);
  } catch (error) {
    throw toOAuthError(error, "Authorization");
  }
  const back = new URL(await redirect(url));
  const tokens = await tokenRequest(context, "Authorization", async () => {
    const params = oauth.validateAuthResponse(server as never, identity.client, back, state);
    const response = await oauth.authorizationCodeGrantRequest(
      server as never,
      identity.client,
      identity.auth,
      params,
      redirectUri,
      verifier,
      { additionalParameters: { resource }, ...tokenOptions(context, server) },
    );
    return oauth.processAuthorizationCodeResponse(server as never, identity.client, response);
  });
  return stored(tokens, server.issuer, resource, scope);
}

/** The client-credentials grant of a machine client (MCP OAuth client-credentials extension). */
export async function clientCredentialsGrant(
  context: IdentityContext,
  identity: ClientIdentity,
  discovery: Discovery,
  scope: string | undefined,
): Promise<StoredTokens> {
  const { oauth } = context;
  const { server, resource } = discovery;
  const tokens = await tokenRequest(context, "Client credentials grant", async () => {
    const response = await oauth.clientCredentialsGrantRequest(
      server as never,
      identity.client,
      identity.auth,
      { resource, ...(scope ? { scope } : {}) },
      tokenOptions(context, server),
    );
    return oauth.processClientCredentialsResponse(server as never, identity.client, response);
  });
  return stored(tokens, server.issuer, resource, scope);
}

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * The assertion for `discovery.server`, bound to it: an ID-JAG asked for it, or the workload's
 * token, sent only to the issuer pinned in the options, else only to one its `aud` names.
 */
async function assertionFor(
  context: IdentityContext,
  discovery: Discovery,
  scope: string | undefined,
): Promise<string> {
  const { options } = context;
  const { server } = discovery;
  if (options.grant === "enterprise_managed") return idJagFor(context, discovery, scope);
  checkIssuer(options, server);
  const given = options.assertion;
  if (given === undefined) throw new OAuthError("The jwt_bearer grant needs an `assertion`");
  const assertion = typeof given === "function" ? await given() : given;
  if (options.assertionIssuer === undefined) checkAudience(assertion, server, "assertion");
  return assertion;
}

/**
 * The JWT-bearer grant (RFC 7523 §2.1) of a workload presenting its identity token, or of a
 * user presenting an enterprise ID-JAG (SEP-990); a refusal is reported, never retried with
 * another grant.
 */
export async function jwtBearerGrant(
  context: IdentityContext,
  identity: ClientIdentity,
  discovery: Discovery,
  scope: string | undefined,
): Promise<StoredTokens> {
  const { oauth } = context;
  const { server, resource } = discovery;
  const assertion = await assertionFor(context, discovery, scope);
  const tokens = await tokenRequest(context, "JWT bearer grant", async () => {
    const response = await oauth.genericTokenEndpointRequest(
      server as never,
      identity.client,
      identity.auth,
      JWT_BEARER,
      { assertion, resource, ...(scope ? { scope } : {}) },
      tokenOptions(context, server),
    );
    return oauth.processGenericTokenEndpointResponse(server as never, identity.client, response);
  });
  return stored(tokens, server.issuer, resource, scope);
}

/** Exchanges a refresh token for new tokens, for the same resource. */
export async function refreshGrant(
  context: IdentityContext,
  identity: ClientIdentity,
  server: ServerMetadata,
  tokens: StoredTokens & { refreshToken: string },
): Promise<StoredTokens> {
  const { oauth } = context;
  const fresh = await tokenRequest(context, "Token refresh", async () => {
    const response = await oauth.refreshTokenGrantRequest(
      server as never,
      identity.client,
      identity.auth,
      tokens.refreshToken,
      { additionalParameters: { resource: tokens.resource }, ...tokenOptions(context, server) },
    );
    return oauth.processRefreshTokenResponse(server as never, identity.client, response);
  });
  return stored(fresh, server.issuer, tokens.resource, tokens.scope, tokens.refreshToken);
}
