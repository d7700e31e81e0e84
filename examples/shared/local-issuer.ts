import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { CodeFlow, type Grant, type TokenRequestRecord } from "./local-issuer-code.js";

export type { TokenRequestRecord } from "./local-issuer-code.js";

/** Options of {@link startLocalIssuer}. */
export interface LocalIssuerOptions {
  /** Port on 127.0.0.1. @default 0 (any free port) */
  port?: number;
  /** Scopes the issuer advertises and grants. @default [] */
  scopes?: string[];
  /** Lifetime of issued tokens in seconds. @default 3600 */
  tokenTtlSec?: number;
}

/** How a test wants one token signed. */
export interface SignOptions {
  /** Key id in the header. @default the current key's */
  kid?: string;
  /** @default "RS256" */
  alg?: string;
  /** Signing key. @default the current private key */
  key?: CryptoKey | Uint8Array;
  /** Seconds from now; negative for an expired token. @default tokenTtlSec */
  expiresInSec?: number;
}

/**
 * A development OAuth authorization server on loopback: a JWKS, RFC 8414 metadata, Dynamic
 * Client Registration, an authorization endpoint that approves at once, a token endpoint.
 */
export interface LocalIssuer {
  /** The issuer identifier, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly jwksUrl: string;
  /** JWKS responses served so far. */
  readonly jwksFetches: number;
  /** The token requests answered with tokens, in order. */
  readonly tokenRequests: readonly TokenRequestRecord[];
  /** The public key of the current signing key, as a JWK. */
  readonly publicJwk: JWK;
  /** Signs a token with the issuer's current key (defaults: `iss` this issuer, `iat`, `exp`). */
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  /** Adds a new signing key to the JWKS and signs with it from now on; returns its kid. */
  rotate(): Promise<string>;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomUUID();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  return { kid, privateKey, publicJwk };
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of req) body += chunk;
  return body;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readBody(req));
}

/** The client id of `client_secret_basic` authentication; the secret is not checked. */
function basicClientId(req: IncomingMessage): string | undefined {
  const match = /^Basic (.+)$/i.exec(req.headers.authorization ?? "");
  if (!match) return undefined;
  const [id] = Buffer.from(match[1]!, "base64").toString().split(":");
  return id ? decodeURIComponent(id) : undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/**
 * Starts a local issuer for examples and tests. Its token endpoint grants `client_credentials`
 * to anyone, with the scopes and `resource` (RFC 8707) asked for, and the authorization-code
 * grant (PKCE S256) to registered clients, approved without a user: a stand-in for a real
 * authorization server, never for production.
 */
export async function startLocalIssuer(options: LocalIssuerOptions = {}): Promise<LocalIssuer> {
  const keys: SigningKey[] = [await newKey()];
  const ttl = options.tokenTtlSec ?? 3600;
  const scopes = options.scopes ?? [];
  let jwksFetches = 0;
  let url = "";

  const sign = (claims: JWTPayload, signOptions: SignOptions = {}) => {
    const current = keys[keys.length - 1]!;
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: url,
      iat: now,
      exp: now + (signOptions.expiresInSec ?? ttl),
      ...claims,
    })
      .setProtectedHeader({
        alg: signOptions.alg ?? "RS256",
        kid: signOptions.kid ?? current.kid,
        typ: "at+jwt",
      })
      .sign(signOptions.key ?? current.privateKey);
  };

  const codeFlow = new CodeFlow(() => url, scopes);
  const tokenRequests: TokenRequestRecord[] = [];

  /** Signs an access token for a grant and answers with it (and a refresh token if any). */
  const issue = async (grant: Grant, res: ServerResponse, refreshToken?: string) => {
    const accessToken = await sign({
      sub: grant.clientId,
      client_id: grant.clientId,
      aud: grant.resource,
      scope: grant.scope,
    });
    send(res, 200, {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ttl,
      scope: grant.scope,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    });
  };

  /** The token endpoint: client credentials to anyone, codes and refresh tokens as issued. */
  const answerToken = async (
    form: URLSearchParams,
    basicId: string | undefined,
    res: ServerResponse,
  ) => {
    const grantType = form.get("grant_type") ?? "";
    const record = (grant: Grant) =>
      tokenRequests.push({
        grantType,
        clientId: grant.clientId,
        resource: grant.resource,
        scope: grant.scope,
      });
    if (grantType === "authorization_code" || grantType === "refresh_token") {
      const grant = codeFlow.redeem(form);
      if (typeof grant === "string") return send(res, 400, { error: grant });
      record(grant);
      return issue(grant, res, codeFlow.refreshTokenFor(grant));
    }
    if (grantType !== "client_credentials")
      return send(res, 400, { error: "unsupported_grant_type" });
    const resource = form.get("resource");
    if (!resource) {
      return send(res, 400, { error: "invalid_target", error_description: "resource is required" });
    }
    const asked = (form.get("scope") ?? "").split(" ").filter(Boolean);
    const unknown = asked.filter((scope) => !scopes.includes(scope));
    if (unknown.length > 0) {
      return send(res, 400, { error: "invalid_scope", error_description: unknown.join(" ") });
    }
    const grant = {
      clientId: form.get("client_id") ?? basicId ?? "local-client",
      resource,
      scope: asked.join(" "),
    };
    record(grant);
    return issue(grant, res);
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/.well-known/jwks.json") {
      jwksFetches++;
      return send(res, 200, { keys: keys.map((key) => key.publicJwk) });
    }
    if (req.method === "GET" && path === "/.well-known/oauth-authorization-server") {
      return send(res, 200, {
        issuer: url,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        jwks_uri: `${url}/.well-known/jwks.json`,
        registration_endpoint: `${url}/register`,
        grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
        authorization_response_iss_parameter_supported: true,
        token_endpoint_auth_methods_supported: [
          "none",
          "client_secret_post",
          "client_secret_basic",
        ],
        scopes_supported: scopes,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (req.method === "POST" && path === "/token") {
      readForm(req).then(
        (form) => answerToken(form, basicClientId(req), res),
        () => send(res, 400, { error: "invalid_request" }),
      );
      return;
    }
    if (req.method === "POST" && path === "/register") {
      readBody(req).then(
        (body) => {
          const answer = codeFlow.register(JSON.parse(body) as Record<string, unknown>);
          send(res, answer.status, answer.body);
        },
        () => send(res, 400, { error: "invalid_client_metadata" }),
      );
      return;
    }
    if (req.method === "GET" && path === "/authorize") return codeFlow.authorize(req, res);
    send(res, 404, { error: "not_found" });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    jwksUrl: `${url}/.well-known/jwks.json`,
    get jwksFetches() {
      return jwksFetches;
    },
    tokenRequests,
    get publicJwk() {
      return keys[keys.length - 1]!.publicJwk;
    },
    sign,
    async rotate() {
      const key = await newKey();
      keys.push(key);
      return key.kid;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
