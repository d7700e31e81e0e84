import type { McpAuth } from "../../auth/types.js";
import { ErrorCode, McpError } from "../../protocol/errors.js";
import { MODERN_VERSIONS, SUPPORTED_VERSIONS } from "../../protocol/versions.js";
import type { Implementation } from "../../server/types.js";
import { toBase64Url, utf8 } from "../../utils/base64.js";
import { errorResponse } from "../responses.js";
import { pathnameOf } from "../target.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import {
  buildServerCard,
  catalogIdentifier,
  checkServerCardOptions,
  SERVER_CARD_MEDIA_TYPE,
  type ServerCardOptions,
} from "./server-card.js";

/** The reserved location of a card: `<streamable-http-url>/server-card` (SEP-2127). */
const CARD_SUFFIX = "/server-card";
/** Where domain-level discovery starts (SEP-2127 names the AI Catalog's well-known URI). */
const AI_CATALOG = "/.well-known/ai-catalog.json";
/** Where earlier drafts of SEP-2127 put the card, and where deployed clients still look. */
const WELL_KNOWN_CARDS = new Set([
  "/.well-known/mcp/server-card.json",
  "/.well-known/mcp/server-card",
]);

/** The paths at the site's root the discovery documents are served at (adapters route them). */
export const WELL_KNOWN_DISCOVERY: ReadonlySet<string> = new Set([AI_CATALOG, ...WELL_KNOWN_CARDS]);

/** A discovery document a request asks for. */
type Target =
  | { doc: "card"; media: string; endpointPath: string | undefined }
  | { doc: "catalog"; media: string };

/**
 * The CORS headers SEP-2127 requires of a hosted card, on every answer and whatever the
 * endpoint's `allowedOrigins`: the card is public and read-only. `If-None-Match` is allowed and
 * `ETag` exposed so that a page can revalidate.
 */
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET",
  "access-control-allow-headers": "Content-Type, If-None-Match",
  "access-control-expose-headers": "ETag",
};
const ALLOW = "GET, HEAD, OPTIONS";
/** SEP-2127's caching recommendation; revalidation with the ETag costs no body. */
const CACHE_CONTROL = "public, max-age=3600";

/** The endpoint's discovery documents: its Server Card and the AI Catalog that points to it. */
export interface Discovery {
  /**
   * The document a request to `url` (or to the target path) asks for; undefined for every other
   * (checked on each).
   */
  match(url: string): Target | undefined;
  /** Answers a request {@link match} claimed. */
  serve(req: McpHttpRequest, target: Target): Promise<McpHttpResponse> | McpHttpResponse;
}

/** What the documents are made from. */
export interface DiscoveryOptions {
  serverCard: ServerCardOptions | false | undefined;
  auth: McpAuth | undefined;
  /** Whether legacy clients are served (their versions are then listed on the card). */
  legacy: boolean;
  /** Whether the public host and scheme are read from a trusted proxy's `X-Forwarded-*`. */
  forwarded: boolean;
}

/**
 * The discovery documents of an endpoint serving `info`, or undefined when they are off:
 * `serverCard: false`, or no `serverCard` on an endpoint behind auth (its landing page names no
 * server either: a card there is the app's choice to make).
 */
export function createDiscovery(
  info: Implementation,
  options: DiscoveryOptions,
): Discovery | undefined {
  const { serverCard, auth } = options;
  if (serverCard === false || (serverCard === undefined && auth)) return undefined;
  const cardOptions = serverCard ?? {};
  checkServerCardOptions(cardOptions);
  const configured = cardOptions.endpoint ?? auth?.resource;
  const versions = options.legacy ? SUPPORTED_VERSIONS : MODERN_VERSIONS;
  const tags = new Map<string, string>();
  // A body that names the request's origin is cached per origin (RFC 9110 §12.5.5); one
  // naming a configured absolute endpoint is the same for all.
  const followsRequest = configured === undefined || configured.startsWith("/");
  const vary = !followsRequest
    ? undefined
    : options.forwarded
      ? "Host, X-Forwarded-Host, X-Forwarded-Proto"
      : "Host";

  /** The endpoint's public URL: as configured when absolute, else on the request's origin. */
  const endpointOf = (req: McpHttpRequest, path: string | undefined): string => {
    if (!followsRequest && configured !== undefined) return configured;
    const endpoint = path ?? configured ?? "/mcp";
    return publicOrigin(req) + (endpoint === "" ? "/" : endpoint);
  };

  const body = (req: McpHttpRequest, target: Target): string => {
    const endpoint = endpointOf(req, target.doc === "card" ? target.endpointPath : undefined);
    const card = buildServerCard(info, cardOptions, { endpoint, versions });
    if (target.doc === "card") return JSON.stringify(card);
    const entry = {
      identifier: catalogIdentifier(card.name),
      type: SERVER_CARD_MEDIA_TYPE,
      url: endpoint.replace(/\/+$/, "") + CARD_SUFFIX,
    };
    return JSON.stringify({ specVersion: "1.0", entries: [entry] });
  };

  return {
    match,
    async serve(req, target) {
      if (req.method === "OPTIONS")
        return {
          status: 204,
          headers: { ...CORS, "access-control-max-age": "7200", allow: ALLOW },
          body: null,
        };
      if (req.method !== "GET" && req.method !== "HEAD")
        return errorResponse(405, new McpError(ErrorCode.InvalidRequest, "Method not allowed"), {
          headers: { ...CORS, allow: ALLOW },
        });
      const text = body(req, target);
      return represent(req, text, target.media, await entityTag(tags, text), vary);
    },
  };
}

/**
 * Which document a request's URL, or its target (a path), names, if any; cheap for the requests
 * that name none.
 */
function match(url: string): Target | undefined {
  if (!url.includes(CARD_SUFFIX) && !url.includes(AI_CATALOG)) return undefined;
  const pathname = pathnameOf(url);
  if (pathname === AI_CATALOG) return { doc: "catalog", media: "application/ai-catalog+json" };
  // The drafts that named this path required application/json.
  if (WELL_KNOWN_CARDS.has(pathname))
    return { doc: "card", media: "application/json", endpointPath: undefined };
  if (!pathname.endsWith(CARD_SUFFIX)) return undefined;
  const endpointPath = pathname.slice(0, -CARD_SUFFIX.length);
  return { doc: "card", media: SERVER_CARD_MEDIA_TYPE, endpointPath };
}

/**
 * The origin clients reach the endpoint at: the request's scheme and its Host (the forwarded
 * host when `trustProxy` believes it: the request arrives here rewritten by `asForwarded`).
 * Next.js names `localhost` in `request.url` whatever the Host, so the header wins.
 */
function publicOrigin(req: McpHttpRequest): string {
  const url = new URL(req.url);
  const host = req.header("host");
  if (host === null) return url.origin;
  try {
    return new URL(`${url.protocol}//${host}`).origin;
  } catch {
    return url.origin;
  }
}

/** A strong entity tag: the SHA-256 of the body, remembered for the few bodies an endpoint has. */
async function entityTag(tags: Map<string, string>, text: string): Promise<string> {
  const known = tags.get(text);
  if (known !== undefined) return known;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text)));
  const tag = `"${toBase64Url(digest)}"`;
  // One body per public origin and endpoint path: a handful, unless Host headers are made up.
  if (tags.size >= 64) tags.clear();
  tags.set(text, tag);
  return tag;
}

/** Whether an `If-None-Match` value names `tag` (weak comparison, RFC 9110 §13.1.2). */
function matchesTag(header: string | null, tag: string): boolean {
  if (header === null) return false;
  return header.split(",").some((entry) => {
    const value = entry.trim();
    return value === "*" || value.replace(/^W\//, "") === tag;
  });
}

/** The document's answer: 304 when the client holds it already, HEAD without its body. */
function represent(
  req: McpHttpRequest,
  text: string,
  media: string,
  tag: string,
  vary: string | undefined,
): McpHttpResponse {
  const headers: Record<string, string> = { ...CORS, "cache-control": CACHE_CONTROL, etag: tag };
  if (vary !== undefined) headers.vary = vary;
  if (matchesTag(req.header("if-none-match"), tag)) return { status: 304, headers, body: null };
  headers["content-type"] = media;
  headers["x-content-type-options"] = "nosniff";
  if (req.method === "HEAD") {
    headers["content-length"] = String(utf8(text).byteLength);
    return { status: 200, headers, body: null };
  }
  return { status: 200, headers, body: text };
}
