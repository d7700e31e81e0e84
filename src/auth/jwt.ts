import type { JSONWebKeySet, JWK, JWTPayload, JWTVerifyGetKey } from "jose";
import type { JsonObject } from "../protocol/messages.js";
import { bearerAuth, InvalidTokenError, type ResourceServerOptions } from "./bearer.js";
import type { AuthInfo, McpAuth } from "./types.js";

const ASYMMETRIC = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];
const SYMMETRIC = ["HS256", "HS384", "HS512"];

type Jose = typeof import("jose");
let jose: Promise<Jose> | undefined;

/**
 * jose, loaded when the first token is verified rather than with `mcp-mount/auth`: it is the
 * largest module graph the package has (about 45 modules), and a server using only bearerAuth or
 * appAuth, or one cold-starting to answer a single request, need not pay for it.
 */
function loadJose(): Promise<Jose> {
  jose ??= import("jose");
  return jose;
}

/** Options of {@link jwtAuth}: where the keys come from (exactly one), and what to check. */
export interface JwtAuthOptions extends ResourceServerOptions {
  /** The `iss` every token must carry; also the default authorization server. */
  issuer: string;
  /** The issuer's JWKS URL; keys are cached, and an unknown `kid` refetches at most once per cooldown. */
  jwksUrl?: string | URL;
  /** A local JWK set. */
  jwks?: JSONWebKeySet;
  /** One public key: a CryptoKey, a JWK, or an SPKI PEM (imported for `algorithms[0]`). */
  publicKey?: CryptoKey | JWK | string;
  /** A shared secret, for HS256/384/512 tokens. */
  secret?: string | Uint8Array;
  /** Signature algorithms accepted. @default every RS/PS/ES/EdDSA one for public keys, HS* for a secret */
  algorithms?: string[];
  /** The `aud` a token must carry (RFC 8707). @default the resource URL */
  audience?: string | string[];
  /** Leeway for `exp` and `nbf`, in seconds. @default 30 */
  clockToleranceSec?: number;
  /** Issuers named in the metadata's `authorization_servers`. @default [issuer] */
  authorizationServers?: string[];
  /** Timeout of a JWKS fetch. @default 5_000 */
  jwksTimeoutMs?: number;
  /** Least time between two JWKS fetches caused by unknown key ids. @default 30_000 */
  jwksCooldownMs?: number;
  /** Longest time a fetched JWKS is trusted before it is fetched again. @default 600_000 */
  jwksMaxAgeMs?: number;
}

function checkAlgorithms(algorithms: string[], symmetric: boolean): void {
  if (algorithms.length === 0) throw new TypeError("algorithms must not be empty");
  for (const alg of algorithms) {
    if (alg.toLowerCase() === "none") throw new TypeError('Algorithm "none" is never accepted');
    // Mixing families is how RS/HS confusion attacks start: a public key used as an HMAC secret.
    const allowed = symmetric ? SYMMETRIC : ASYMMETRIC;
    if (!allowed.includes(alg))
      throw new TypeError(
        `Algorithm ${alg} does not fit a ${symmetric ? "shared secret" : "public key"}`,
      );
  }
}

/**
 * Checks the key options now, so a bad configuration throws when the auth is built, and returns
 * how to make the key lookup once jose is loaded (once: a remote JWKS caches its keys).
 */
function keySource(options: JwtAuthOptions, algorithms: string[]): (jose: Jose) => JWTVerifyGetKey {
  const sources = [options.jwksUrl, options.jwks, options.publicKey, options.secret].filter(
    (s) => s !== undefined,
  );
  if (sources.length !== 1)
    throw new TypeError("jwtAuth needs exactly one of jwksUrl, jwks, publicKey or secret");
  if (options.jwksUrl !== undefined) {
    const url = new URL(options.jwksUrl);
    return (jose) =>
      jose.createRemoteJWKSet(url, {
        timeoutDuration: options.jwksTimeoutMs ?? 5_000,
        cooldownDuration: options.jwksCooldownMs ?? 30_000,
        cacheMaxAge: options.jwksMaxAgeMs ?? 600_000,
      });
  }
  const { jwks } = options;
  if (jwks !== undefined) return (jose) => jose.createLocalJWKSet(jwks);
  if (options.secret !== undefined) {
    const secret =
      typeof options.secret === "string"
        ? new TextEncoder().encode(options.secret)
        : options.secret;
    if (secret.byteLength < 32) throw new TypeError("secret must be at least 32 bytes");
    return () => async () => secret;
  }
  const key = options.publicKey!;
  if (typeof key === "string") {
    return (jose) => {
      const imported = jose.importSPKI(key, algorithms[0]!);
      imported.catch(() => {});
      return () => imported;
    };
  }
  if ("kty" in key) return (jose) => jose.createLocalJWKSet({ keys: [key as JWK] });
  return () => async () => key as CryptoKey;
}

/** Reasons a token fails verification, worded for `error_description`. */
function describe(error: unknown, { errors }: Jose): string | undefined {
  if (error instanceof errors.JWTExpired) return "The access token expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf") return "The access token is not valid yet";
    if (error.claim === "iss") return "The access token has the wrong issuer";
    if (error.claim === "aud") return "The access token is not meant for this resource";
    return `The access token's ${error.claim} claim is not valid`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "The access token's signature is not valid";
  if (error instanceof errors.JOSEAlgNotAllowed)
    return "The access token's algorithm is not accepted";
  if (error instanceof errors.JWKSNoMatchingKey)
    return "No key of the issuer matches the access token";
  if (error instanceof errors.JWKSMultipleMatchingKeys)
    return "Several keys of the issuer match the access token";
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  )
    return "The access token is malformed";
  // Anything else (JWKS timeout or fetch failure): the token could not be checked at all.
  return undefined;
}

function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload;
  if (typeof scope === "string") return scope.split(" ").filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === "string");
  if (typeof scp === "string") return scp.split(" ").filter(Boolean);
  return [];
}

function principalOf(payload: JWTPayload): AuthInfo {
  const clientId =
    typeof payload.client_id === "string"
      ? payload.client_id
      : typeof payload.azp === "string"
        ? payload.azp
        : undefined;
  // Client-credentials tokens may carry only a client id: it is then the subject.
  const subject = payload.sub ?? clientId;
  if (subject === undefined) throw new InvalidTokenError("The access token has no subject");
  const auth: AuthInfo = {
    issuer: payload.iss,
    subject,
    scopes: scopesOf(payload),
    claims: payload as JsonObject,
  };
  if (clientId !== undefined) auth.clientId = clientId;
  return auth;
}

/**
 * Auth for JWT access tokens, verified with jose: signature against the issuer's keys, an
 * explicit algorithm allow-list, issuer, audience (this resource by default, RFC 8707), `exp`
 * and `nbf` with a small clock tolerance; scopes from `scope` or `scp`.
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 * import { jwtAuth } from "mcp-mount/auth";
 *
 * const mcp = createMcpHandler(server, {
 *   auth: jwtAuth({
 *     issuer: "https://auth.example.com",
 *     jwksUrl: "https://auth.example.com/.well-known/jwks.json",
 *     resource: "https://api.example.com/mcp",
 *     scopesSupported: ["notes:read", "notes:write"],
 *   }),
 * });
 * ```
 */
export function jwtAuth(options: JwtAuthOptions): McpAuth {
  const symmetric = options.secret !== undefined;
  const algorithms = options.algorithms ?? (symmetric ? SYMMETRIC : ASYMMETRIC);
  checkAlgorithms(algorithms, symmetric);
  const makeKey = keySource(options, algorithms);
  let key: JWTVerifyGetKey | undefined;
  const clockTolerance = options.clockToleranceSec ?? 30;
  return bearerAuth({
    ...options,
    authorizationServers: options.authorizationServers ?? [options.issuer],
    async verify(token, { resource }) {
      const jose = await loadJose();
      key ??= makeKey(jose);
      try {
        const { payload } = await jose.jwtVerify(token, key, {
          issuer: options.issuer,
          audience: options.audience ?? resource,
          algorithms,
          clockTolerance,
          requiredClaims: ["exp"],
        });
        return principalOf(payload);
      } catch (error) {
        const description = describe(error, jose);
        if (description === undefined) throw error;
        throw new InvalidTokenError(description);
      }
    },
  });
}
