import { isObject } from "../../protocol/messages.js";
import type { ServerMetadata } from "./discovery.js";
import { OAuthError, type OAuthOptions, type PreRegisteredClient } from "./types.js";

/** True for a pre-registered client holding a credential (a secret or a signing key). */
function holdsCredential(client: PreRegisteredClient): boolean {
  return client.clientSecret !== undefined || client.privateKey !== undefined;
}

/**
 * True when a pre-registered client may be shown to `issuer`: its own issuer, or any for a
 * public client that names none (a client id is no credential).
 */
export function usableAt(client: PreRegisteredClient, issuer: string): boolean {
  return client.issuer === undefined ? !holdsCredential(client) : client.issuer === issuer;
}

/**
 * Refuses options that would show a credential to whichever authorization server an MCP server
 * names: a client secret or key, or an enterprise grant, not bound to one issuer.
 */
export function checkBindings(options: OAuthOptions): void {
  const { client, grant, enterprise } = options;
  if (client && client.issuer === undefined && holdsCredential(client)) {
    throw new OAuthError(
      "A pre-registered client with a clientSecret or privateKey needs its `issuer`: a credential is shown to that authorization server only",
    );
  }
  if (grant === "enterprise_managed" && typeof enterprise?.issuer !== "string") {
    throw new OAuthError(
      'The "enterprise_managed" grant needs `enterprise` with the `issuer` of the MCP server\'s authorization server',
    );
  }
}

/** The issuer the grant's assertion is pinned to, when the options pin one. */
function pinnedIssuer(options: OAuthOptions): string | undefined {
  if (options.grant === "enterprise_managed") return options.enterprise?.issuer;
  return options.grant === "jwt_bearer" ? options.assertionIssuer : undefined;
}

/**
 * Refuses an authorization server other than the one the grant's assertion is pinned to,
 * before anything is sent to it (or asked of an identity provider for it).
 */
export function checkIssuer(options: OAuthOptions, server: ServerMetadata): void {
  const pinned = pinnedIssuer(options);
  if (pinned !== undefined && pinned !== server.issuer) {
    throw new OAuthError(
      `The MCP server names the authorization server ${server.issuer}, but the assertion is for ${pinned} only: not sent`,
    );
  }
}

/** The `aud` values of a JWT, undefined when it is not one. */
function audiencesOf(jwt: string): string[] | undefined {
  const payload = jwt.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const json: unknown = JSON.parse(
      atob(
        payload
          .replace(/-/g, "+")
          .replace(/_/g, "/")
          .padEnd(Math.ceil(payload.length / 4) * 4, "="),
      ),
    );
    if (!isObject(json)) return undefined;
    const { aud } = json;
    if (typeof aud === "string") return [aud];
    return Array.isArray(aud) ? aud.filter((a) => typeof a === "string") : undefined;
  } catch {
    return undefined;
  }
}

const withoutSlash = (url: string) => url.replace(/\/$/, "");

/**
 * Refuses to send a JWT assertion to an authorization server its `aud` does not name: by
 * issuer or token endpoint URL (RFC 7523 §3), a trailing slash aside.
 */
export function checkAudience(assertion: string, server: ServerMetadata, what: string): void {
  const audiences = audiencesOf(assertion)?.map(withoutSlash) ?? [];
  const endpoint = server.token_endpoint;
  const names = [server.issuer, ...(typeof endpoint === "string" ? [endpoint] : [])].map(
    withoutSlash,
  );
  if (!audiences.some((aud) => names.includes(aud))) {
    throw new OAuthError(
      `The ${what} is not for the authorization server ${server.issuer} (its aud names another): not sent`,
    );
  }
}
