import type { AppLogin, McpAuth } from "../../auth/types.js";
import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { RequestId } from "../../protocol/messages.js";
import { isIdentified } from "../../server/access.js";
import type { AuthInfo } from "../../server/types.js";
import { errorResponse, jsonResponse } from "../responses.js";
import { pathnameOf, targetOf } from "../target.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";

/** Where RFC 9728 §3 puts Protected Resource Metadata. */
const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** The canonical URL of the endpoint a request was sent to (RFC 8707: no query, no fragment). */
export function resourceOf(auth: McpAuth, url: URL): string {
  if (auth.resource !== undefined) return auth.resource;
  const { origin, pathname, hostname } = url;
  if (!warnedAboutResource && !LOOPBACK.has(hostname)) {
    warnedAboutResource = true;
    // The URL's host comes from the request's Host header: fine on loopback, weak in public.
    console.warn(
      "mcp-mount: auth has no `resource`; the token audience is derived from each request's URL. Set `resource` to the endpoint's public URL.",
    );
  }
  return origin + pathname.replace(/\/+$/, "");
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
let warnedAboutResource = false;

/** The metadata URL of a resource: the well-known path inserted before its path (RFC 9728 §3.1). */
export function metadataUrlOf(resource: string): string {
  const { origin, pathname } = new URL(resource);
  return origin + WELL_KNOWN + pathname.replace(/\/+$/, "");
}

/** True when the request asks for a Protected Resource Metadata document. */
export function isMetadataRequest(req: McpHttpRequest): boolean {
  return isMetadataUrl(targetOf(req));
}

/** {@link isMetadataRequest} for a request URL or target already read (see `targetOf`). */
export function isMetadataUrl(url: string): boolean {
  // Cheap test first: this runs on every request.
  if (!url.includes(WELL_KNOWN)) return false;
  const pathname = pathnameOf(url);
  return pathname === WELL_KNOWN || pathname.startsWith(`${WELL_KNOWN}/`);
}

/**
 * Serves the metadata document for the resource its path names. It is public and read
 * cross-origin by browser-based clients, so it allows any origin.
 */
export function serveMetadata(auth: McpAuth, req: McpHttpRequest): McpHttpResponse {
  if (req.method !== "GET" && req.method !== "HEAD")
    return errorResponse(405, new McpError(ErrorCode.InvalidRequest, "Method not allowed"), {
      headers: {
        allow: "GET",
      },
    });
  const { origin, pathname } = new URL(req.url);
  const resource = origin + pathname.slice(WELL_KNOWN.length).replace(/\/+$/, "");
  if (
    auth.resource !== undefined &&
    // Behind a proxy the request's origin is an internal one: compare paths only.
    new URL(metadataUrlOf(auth.resource)).pathname !== pathname.replace(/\/+$/, "")
  )
    return errorResponse(
      404,
      new McpError(ErrorCode.InvalidRequest, "No protected resource at this path"),
    );
  return jsonResponse(200, auth.metadata(auth.resource ?? resource), {
    "cache-control": "public, max-age=3600",
    "access-control-allow-origin": "*",
  });
}

function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, "\\$&")}"`;
}

/** A `WWW-Authenticate: Bearer ...` challenge (RFC 6750 §3, RFC 9728 §5.1). */
function challenge(
  auth: McpAuth,
  resource: string,
  params: { error?: string; description?: string; scopes?: readonly string[] },
): string {
  const parts: string[] = [];
  if (params.error) parts.push(`error=${quoted(params.error)}`);
  if (params.description) parts.push(`error_description=${quoted(params.description)}`);
  parts.push(`resource_metadata=${quoted(metadataUrlOf(resource))}`);
  const scopes = params.scopes ?? auth.challengeScopes;
  if (scopes.length > 0) parts.push(`scope=${quoted(scopes.join(" "))}`);
  return `Bearer ${parts.join(", ")}`;
}

/** What authentication made of a request: its principal, or the response that refuses it. */
export type AuthOutcome = { auth: AuthInfo; resource: string } | { response: McpHttpResponse };

/**
 * Authenticates a request by its bearer token (spec: basic/authorization; RFC 6750). Never logs
 * the token: errors reported through `reportError` come from the verifier, not from the request.
 */
export async function authenticate(
  auth: McpAuth,
  req: McpHttpRequest,
  app: unknown,
  reportError: (error: unknown) => void,
): Promise<AuthOutcome> {
  const login = auth.app;
  // The stated order: a bearer token when the request carries one (and tokens are accepted),
  // else the app's own login.
  if (login && !(login.acceptsBearer && /^Bearer(\s|$)/i.test(req.header("authorization") ?? "")))
    return authenticateByApp(auth, login, req, app, reportError);
  const url = new URL(req.url);
  const resource = resourceOf(auth, url);
  const refuse = (status: number, message: string, header: string): AuthOutcome => ({
    response: errorResponse(status, new McpError(ErrorCode.InvalidRequest, message), {
      headers: {
        "www-authenticate": header,
      },
    }),
  });
  // Tokens in URIs end up in logs and Referer headers (spec: authorization, token handling).
  if (url.searchParams.has("access_token"))
    return refuse(
      400,
      "Access tokens must be sent in the Authorization header",
      challenge(auth, resource, {
        error: "invalid_request",
        description: "Access tokens in the query string are not accepted",
      }),
    );
  const header = req.header("authorization");
  const match = header === null ? null : /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (!match) {
    if (header === null || !/^Bearer(\s|$)/i.test(header))
      return refuse(401, "Authorization required", challenge(auth, resource, {}));
    return refuse(
      401,
      "Invalid access token: Malformed bearer token",
      challenge(auth, resource, { error: "invalid_token", description: "Malformed bearer token" }),
    );
  }
  let verdict: Awaited<ReturnType<McpAuth["verify"]>>;
  try {
    verdict = await auth.verify(match[1]!, resource);
  } catch (error) {
    reportError(error);
    return {
      response: errorResponse(
        503,
        new McpError(ErrorCode.InternalError, "The access token could not be checked; try again"),
        { headers: { "retry-after": "5" } },
      ),
    };
  }
  if (!verdict.valid)
    return refuse(
      401,
      `Invalid access token: ${verdict.description}`,
      challenge(auth, resource, { error: "invalid_token", description: verdict.description }),
    );
  // An auth layer of the app's own that names nobody would bind every such caller together.
  if (!isIdentified(verdict.auth)) {
    reportError(new TypeError("auth.verify returned a principal with no subject and no clientId"));
    return {
      response: errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error")),
    };
  }
  return { auth: verdict.auth, resource };
}

/** The principal the app's login found, or the 401 the app shaped for nobody. */
async function authenticateByApp(
  auth: McpAuth,
  login: AppLogin,
  req: McpHttpRequest,
  app: unknown,
  reportError: (error: unknown) => void,
): Promise<AuthOutcome> {
  let found: AuthInfo | undefined;
  try {
    found = await login.principal(req, app);
  } catch (error) {
    reportError(error);
    return {
      response: errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error")),
    };
  }
  // Only a bearer-accepting endpoint names OAuth in its challenges.
  const resource = login.acceptsBearer ? resourceOf(auth, new URL(req.url)) : "";
  if (found) return { auth: found, resource };
  const headers = { ...login.unauthenticated.headers };
  if (login.acceptsBearer) headers["www-authenticate"] = challenge(auth, resource, {});
  return {
    response: errorResponse(
      401,
      new McpError(ErrorCode.InvalidRequest, login.unauthenticated.message),
      { headers },
    ),
  };
}

/** 403 naming the scopes a request needs, so the client can step up (RFC 6750 §3.1). */
export function insufficientScope(
  auth: McpAuth,
  resource: string,
  granted: readonly string[],
  needed: readonly string[],
  id: RequestId | undefined,
): McpHttpResponse {
  // Ask for what the token has plus what is missing, so stepping up loses nothing.
  const scopes = [...new Set([...granted, ...needed])];
  // An endpoint signed in to through the app alone has no token to step up.
  const bearer = auth.app === undefined || auth.app.acceptsBearer;
  return errorResponse(
    403,
    new McpError(ErrorCode.InvalidRequest, `Insufficient scope: needs ${needed.join(" ")}`),
    {
      id,
      headers: bearer
        ? {
            "www-authenticate": challenge(auth, resource, {
              error: "insufficient_scope",
              description: `Needs scope ${needed.join(" ")}`,
              scopes,
            }),
          }
        : {},
    },
  );
}
