import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { RegisteredTool } from "../../server/registry.js";
import { errorResponse } from "../responses.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import { isMetadataRequest } from "./auth-gate.js";
import { type AllowedOrigins, checkAllowedOrigins, isOriginAllowed } from "./origin.js";

/**
 * Options of the endpoint's CORS answers (the origins themselves are `allowedOrigins`).
 *
 * @example
 * ```ts
 * import { createMcpHandler, McpServer } from "mcp-mount";
 *
 * const mcp = createMcpHandler(new McpServer({ name: "notes", version: "1.0.0" }), {
 *   allowedOrigins: ["https://app.example.com"],
 *   cors: { credentials: true, maxAge: 600, allowedHeaders: ["X-Request-Id"] },
 * });
 * ```
 */
export interface CorsOptions {
  /**
   * Send `Access-Control-Allow-Credentials: true`, so pages may call with cookies
   * (`credentials: "include"`); needs `allowedOrigins` set to a list or a function (not `"*"`,
   * not unset). Bearer tokens need no credentials mode. @default false
   */
  credentials?: boolean;
  /** Seconds a browser may keep a preflight's answer (`Access-Control-Max-Age`). @default 7200 */
  maxAge?: number;
  /** Request headers the app's clients send beyond MCP's own (`X-Request-Id`, say). @default [] */
  allowedHeaders?: readonly string[];
  /** Response headers scripts may read beyond MCP's own. @default [] */
  exposedHeaders?: readonly string[];
}

/** What a browser client sends beyond the CORS-safelisted headers (spec: streamable HTTP). */
const MCP_REQUEST_HEADERS = [
  "Content-Type",
  "Authorization",
  "MCP-Protocol-Version",
  "Mcp-Session-Id",
  "Mcp-Method",
  "Mcp-Name",
  "Last-Event-ID",
];

/** What a browser client must read: the session, the version, challenges and when to retry. */
const MCP_EXPOSED_HEADERS = [
  "Mcp-Session-Id",
  "MCP-Protocol-Version",
  "WWW-Authenticate",
  "Retry-After",
  "RateLimit",
  "RateLimit-Policy",
];

/** Every method the endpoint may serve; one it does not is answered 405, readably. */
const METHODS = "GET, POST, DELETE";

/** Serves a request whose Origin was decided: `originAllowed` is the Origin check's verdict. */
export type OriginCheckedRoute = (
  req: McpHttpRequest,
  originAllowed: boolean,
) => Promise<McpHttpResponse>;

/**
 * The endpoint's outermost layer: the Origin verdict, preflights, and CORS on every answer. It
 * does not reject when `route` does not: a failure of its own (an `allowedOrigins` function
 * that throws) is answered by `failed`.
 */
export type OriginGate = (
  req: McpHttpRequest,
  route: OriginCheckedRoute,
) => Promise<McpHttpResponse>;

/**
 * The Origin check and CORS of an endpoint (Fetch standard, CORS protocol), in one place so
 * nothing answers around it: one verdict per request from `allowedOrigins` decides both the
 * 403 of a disallowed origin and the CORS headers of an allowed one. Preflights are answered
 * here, before auth and before the body is read; every other answer (errors, 401, 413, 429,
 * 503 included) gets the headers on its way out. The Protected Resource Metadata document is
 * public: any origin may read it. `cors: false` keeps the Origin check and leaves CORS to the app.
 * Requests `isPublic` claims (the Server Card) pass untouched: their answers, preflights
 * included, carry CORS headers of their own.
 */
export function createOriginGate(
  tools: ReadonlyMap<string, RegisteredTool>,
  allowedOrigins: AllowedOrigins | undefined,
  cors: CorsOptions | false | undefined,
  isPublic: ((req: McpHttpRequest) => boolean) | undefined,
  failed: (error: unknown) => McpHttpResponse,
): OriginGate {
  checkAllowedOrigins(allowedOrigins);
  const options = cors === false ? undefined : checkedCors(cors ?? {}, allowedOrigins);
  // Not async: a request without Origin (no browser sent it; most traffic) goes straight on.
  return (req, route) => {
    const origin = req.header("origin");
    if (origin === null) return route(req, true);
    return gateBrowser(req, route, origin).catch(failed);
  };

  async function gateBrowser(
    req: McpHttpRequest,
    route: OriginCheckedRoute,
    origin: string,
  ): Promise<McpHttpResponse> {
    if (isPublic?.(req)) return route(req, true);
    const verdict = isOriginAllowed(origin, req.header("host"), allowedOrigins);
    const allowed = typeof verdict === "boolean" ? verdict : await verdict;
    if (!options) return route(req, allowed);
    const metadata = isMetadataRequest(req);
    if (req.method === "OPTIONS" && req.header("access-control-request-method") !== null)
      return preflight(tools, options, origin, allowed, metadata);
    const response = await route(req, allowed);
    if (metadata) return withCorsHeaders(response, { "access-control-allow-origin": "*" });
    return withCorsHeaders(response, allowed ? options.actual(origin) : VARY_ORIGIN);
  }
}

const VARY_ORIGIN = { vary: "Origin" };

interface CheckedCors {
  /** The headers an allowed origin's actual request is answered with. */
  actual(origin: string): Record<string, string>;
  /** The headers an allowed origin's preflight is answered with (less the allowed headers). */
  preflight(origin: string): Record<string, string>;
  allowedHeaders: readonly string[];
  /** `Access-Control-Max-Age`. */
  maxAge: string;
}

/** Validates the options once (bad configuration throws at construction) and fixes the headers. */
function checkedCors(cors: CorsOptions, allowedOrigins: AllowedOrigins | undefined): CheckedCors {
  const maxAge = cors.maxAge ?? 7200;
  if (!Number.isInteger(maxAge) || maxAge < 0)
    throw new TypeError(`cors.maxAge must be a whole number of seconds, not ${maxAge}`);
  const credentials = cors.credentials === true;
  if (credentials && allowedOrigins === "*")
    throw new TypeError(
      'cors.credentials needs allowedOrigins to list origins: "*" would let any site call with the user\'s cookies',
    );
  if (credentials && allowedOrigins === undefined)
    throw new TypeError(
      "cors.credentials needs allowedOrigins: list the origins (or give a function) whose pages may call with the user's cookies",
    );
  // "*" answers every origin alike (and caches can share the answer) unless credentials are on.
  const anyOrigin = allowedOrigins === "*";
  const common = (origin: string): Record<string, string> => {
    const headers: Record<string, string> = anyOrigin
      ? { "access-control-allow-origin": "*" }
      : { "access-control-allow-origin": origin, vary: "Origin" };
    if (credentials) headers["access-control-allow-credentials"] = "true";
    return headers;
  };
  const exposed = [...MCP_EXPOSED_HEADERS, ...(cors.exposedHeaders ?? [])].join(", ");
  return {
    actual: (origin) => ({ ...common(origin), "access-control-expose-headers": exposed }),
    preflight: (origin) => ({
      ...common(origin),
      "access-control-allow-methods": METHODS,
      "access-control-max-age": String(maxAge),
    }),
    allowedHeaders: [...MCP_REQUEST_HEADERS, ...(cors.allowedHeaders ?? [])],
    maxAge: String(maxAge),
  };
}

/**
 * A preflight's answer: 204 with what the actual request may do, or 403 with no CORS header for
 * an origin not allowed (the browser then refuses to send the actual request).
 */
function preflight(
  tools: ReadonlyMap<string, RegisteredTool>,
  options: CheckedCors,
  origin: string,
  allowed: boolean,
  metadata: boolean,
): McpHttpResponse {
  const allowHeaders = { "access-control-allow-headers": requestHeaders(tools, options) };
  if (metadata)
    return {
      status: 204,
      headers: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET",
        ...allowHeaders,
        "access-control-max-age": options.maxAge,
      },
      body: null,
    };
  if (!allowed)
    return errorResponse(403, new McpError(ErrorCode.InvalidRequest, "Origin not allowed"), {
      headers: VARY_ORIGIN,
    });
  return { status: 204, headers: { ...options.preflight(origin), ...allowHeaders }, body: null };
}

/**
 * The request headers a page may send: MCP's own, the app's, and the `Mcp-Param-*` headers the
 * tools registered now mirror (read per preflight, since tools come and go; a browser preflights
 * again for a header its cached answer does not list).
 */
function requestHeaders(tools: ReadonlyMap<string, RegisteredTool>, options: CheckedCors): string {
  const names = new Set(options.allowedHeaders);
  for (const tool of tools.values())
    for (const { header } of tool.headerParams) names.add(`Mcp-Param-${header}`);
  return [...names].join(", ");
}

/**
 * The response with CORS headers added, as a new object (responses may be shared constants),
 * but for a stream's, made afresh per request: its body stays unread, so a host may still write
 * the stream straight to its connection (`sse`). A `Vary` the response already has is kept.
 */
function withCorsHeaders(response: McpHttpResponse, cors: Record<string, string>): McpHttpResponse {
  const headers = { ...response.headers, ...cors };
  const vary = response.headers.vary;
  if (vary && cors.vary) headers.vary = `${vary}, ${cors.vary}`;
  if (response.sse) {
    response.headers = headers;
    return response;
  }
  return { status: response.status, headers, body: response.body };
}
