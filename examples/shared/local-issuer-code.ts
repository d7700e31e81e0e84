import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** What a code or refresh token stands for. */
export interface Grant {
  clientId: string;
  resource: string;
  scope: string;
}

interface PendingCode extends Grant {
  redirectUri: string;
  challenge: string;
}

/** One token request the issuer answered, for tests to look at (never the secrets). */
export interface TokenRequestRecord {
  grantType: string;
  clientId: string | undefined;
  resource: string | undefined;
  scope: string | undefined;
}

const token = () => randomBytes(24).toString("base64url");

/**
 * The authorization-code side of the local issuer: Dynamic Client Registration, an
 * authorization endpoint that approves at once (no user, no consent page: a stand-in for a
 * real sign-in), PKCE S256 required and checked, codes used once, refresh tokens.
 */
export class CodeFlow {
  readonly #clients = new Map<string, string[]>();
  readonly #codes = new Map<string, PendingCode>();
  readonly #refreshTokens = new Map<string, Grant>();
  readonly #issuer: () => string;
  readonly #scopes: string[];

  constructor(issuer: () => string, scopes: string[]) {
    this.#issuer = issuer;
    this.#scopes = scopes;
  }

  /** POST /register (RFC 7591): a public client for the redirect URIs given. */
  register(body: Record<string, unknown>): { status: number; body: unknown } {
    const uris = Array.isArray(body.redirect_uris) ? body.redirect_uris.map(String) : [];
    if (uris.length === 0) return { status: 400, body: { error: "invalid_redirect_uri" } };
    const clientId = randomUUID();
    this.#clients.set(clientId, uris);
    return {
      status: 201,
      body: { ...body, client_id: clientId, token_endpoint_auth_method: "none" },
    };
  }

  /** Loopback redirect URIs match on any port (RFC 8252 §7.3). */
  #allowed(clientId: string, redirectUri: string): boolean {
    const portless = (uri: string) => {
      const url = new URL(uri);
      if (url.hostname === "127.0.0.1" || url.hostname === "localhost") url.port = "";
      return url.href;
    };
    return (this.#clients.get(clientId) ?? []).some(
      (uri) => portless(uri) === portless(redirectUri),
    );
  }

  /** GET /authorize: approves at once, redirecting with the code, state and `iss` (RFC 9207). */
  authorize(req: IncomingMessage, res: ServerResponse): void {
    const query = new URL(req.url ?? "/", "http://local").searchParams;
    const clientId = query.get("client_id") ?? "";
    const redirectUri = query.get("redirect_uri") ?? "";
    const resource = query.get("resource");
    const error = !this.#allowed(clientId, redirectUri)
      ? "invalid_request"
      : query.get("response_type") !== "code"
        ? "unsupported_response_type"
        : query.get("code_challenge_method") !== "S256" || !query.get("code_challenge")
          ? "invalid_request"
          : !resource
            ? "invalid_target"
            : undefined;
    if (error || !resource) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error }));
      return;
    }
    const scope = (query.get("scope") ?? "").split(" ").filter((s) => this.#scopes.includes(s));
    const code = token();
    this.#codes.set(code, {
      clientId,
      redirectUri,
      challenge: query.get("code_challenge")!,
      resource,
      scope: scope.join(" "),
    });
    const back = new URL(redirectUri);
    back.searchParams.set("code", code);
    const state = query.get("state");
    if (state) back.searchParams.set("state", state);
    back.searchParams.set("iss", this.#issuer());
    res.writeHead(302, { location: back.href });
    res.end();
  }

  /** The grant behind an authorization code (once) or a refresh token; a string is an error. */
  redeem(form: URLSearchParams): Grant | string {
    if (form.get("grant_type") === "refresh_token") {
      return this.#refreshTokens.get(form.get("refresh_token") ?? "") ?? "invalid_grant";
    }
    const code = this.#codes.get(form.get("code") ?? "");
    this.#codes.delete(form.get("code") ?? "");
    if (!code || code.clientId !== form.get("client_id")) return "invalid_grant";
    if (code.redirectUri !== form.get("redirect_uri")) return "invalid_grant";
    const verifier = form.get("code_verifier") ?? "";
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    if (challenge !== code.challenge) return "invalid_grant";
    if (form.get("resource") !== code.resource) return "invalid_target";
    return { clientId: code.clientId, resource: code.resource, scope: code.scope };
  }

  /** A new refresh token for a grant. */
  refreshTokenFor(grant: Grant): string {
    const refresh = token();
    this.#refreshTokens.set(refresh, grant);
    return refresh;
  }
}
