import type { AppAuthRequest, AppPrincipal, AuthInfo, McpAuth, TokenVerdict } from "./types.js";

/** Options of {@link appAuth}. */
export interface AppAuthOptions {
  /**
   * Also accept OAuth bearer tokens (`jwtAuth()` or `bearerAuth()`): a request carrying an
   * `Authorization: Bearer` header is judged by it alone (an invalid token is refused, never
   * tried as the app's login); only a request without one goes to the app's principal.
   */
  bearer?: McpAuth;
  /** Scopes every request needs. @default the bearer layer's, else [] */
  requiredScopes?: string[];
  /** List only what the caller has the scopes for. @default the bearer layer's, else false */
  hideUnauthorized?: boolean;
  /**
   * The 401 for a caller that is signed in neither way. With a bearer layer it also carries the
   * OAuth challenge, so MCP clients can sign in. @default "Sign in required", no extra headers
   */
  unauthenticated?: { message?: string; headers?: Record<string, string> };
}

/**
 * Takes the MCP principal from the app's own login (a session cookie, an API-key middleware,
 * NextAuth...): `principal` reads the request and the app context computed by the adapter's
 * `context` option, and returns who the user is, or undefined for nobody. Legacy sessions,
 * multi round-trip state and tasks are then bound to that user exactly as to a token's
 * issuer and subject, and tool scopes apply to its `scopes`.
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 * import { appAuth } from "mcp-mount/auth";
 * import { toExpress } from "mcp-mount/express";
 *
 * const mcp = createMcpHandler(server, {
 *   auth: appAuth<{ user?: { id: string } }>((_req, app) =>
 *     app.user ? { subject: app.user.id, scopes: ["notes:read"] } : undefined,
 *   ),
 * });
 * // res.locals.user: whom the app's own login middleware found
 * app.use("/mcp", toExpress(mcp, { context: (_req, res) => ({ user: res.locals.user }) }));
 * ```
 */
export function appAuth<App = unknown>(
  principal: (
    req: AppAuthRequest,
    app: App,
  ) => AppPrincipal | undefined | Promise<AppPrincipal | undefined>,
  options: AppAuthOptions = {},
): McpAuth {
  const { bearer } = options;
  return {
    resource: bearer?.resource,
    requiredScopes: options.requiredScopes ?? bearer?.requiredScopes ?? [],
    challengeScopes: bearer?.challengeScopes ?? [],
    hideUnauthorized: options.hideUnauthorized ?? bearer?.hideUnauthorized ?? false,
    verify(token, resource): Promise<TokenVerdict> {
      if (bearer) return bearer.verify(token, resource);
      return Promise.resolve({ valid: false, description: "Bearer tokens are not accepted here" });
    },
    metadata(resource) {
      if (!bearer) throw new Error("appAuth without a bearer layer has no OAuth metadata");
      return bearer.metadata(resource);
    },
    app: {
      async principal(req, app): Promise<AuthInfo | undefined> {
        const found = await principal(req, app as App);
        if (!found) return undefined;
        if (typeof found.subject !== "string" || found.subject === "")
          throw new TypeError("appAuth: the principal needs a non-empty subject");
        const info: AuthInfo = {
          issuer: found.issuer ?? "app",
          subject: found.subject,
          scopes: [...(found.scopes ?? [])],
        };
        if (found.claims) info.claims = found.claims;
        return info;
      },
      acceptsBearer: bearer !== undefined,
      unauthenticated: {
        message: options.unauthenticated?.message ?? "Sign in required",
        headers: { ...options.unauthenticated?.headers },
      },
    },
  };
}
