import type { McpAuth } from "../../auth/types.js";
import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { Implementation } from "../../server/types.js";
import type { Discovery } from "../discovery/serve.js";
import { isBrowserVisit, landingPage } from "../landing-page.js";
import { errorResponse } from "../responses.js";
import { targetOf } from "../target.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import { isMetadataUrl, serveMetadata } from "./auth-gate.js";
import { isHostAllowed } from "./origin.js";

/** What the checks every request passes before anything else need to know. */
export interface RequestCheckOptions {
  auth: McpAuth | undefined;
  allowedHosts: readonly string[] | undefined;
  /** The server's name and version, on the landing page (which names no server behind auth). */
  info: Implementation;
  /** The HTTP methods the endpoint serves (the landing page's and 405's `Allow`). */
  allow: string;
  /** The Server Card and AI Catalog, when served (`serverCard`). */
  discovery: Discovery | undefined;
}

/**
 * The checks that come before the caller is known, in order: Host (DNS rebinding), the public
 * OAuth metadata and discovery documents (Server Card, AI Catalog), Origin (`originAllowed`: the verdict the origin gate reached), and a browser's
 * visit. A response ends the request; undefined lets it on.
 */
export function checkRequest(
  req: McpHttpRequest,
  originAllowed: boolean,
  options: RequestCheckOptions,
): McpHttpResponse | Promise<McpHttpResponse> | undefined {
  const { auth } = options;
  // A loopback socket is reachable by this machine's browsers, behind a proxy too: a rebinding
  // page can send X-Forwarded-Host as well as Host, so the host as forwarded is checked alike.
  if (!isHostAllowed(req.header("host"), req.localAddress, options.allowedHosts)) {
    return errorResponse(
      403,
      new McpError(
        ErrorCode.InvalidRequest,
        "Host not allowed: list the endpoint's public names in allowedHosts (and set trustProxy behind a proxy)",
      ),
    );
  }
  // The target where the host has one: the URL is a getter that builds the string on some.
  const url = targetOf(req);
  // Public, and read cross-origin by browser clients: served before the Origin check.
  if (isMetadataUrl(url)) {
    if (auth && (!auth.app || auth.app.acceptsBearer)) return serveMetadata(auth, req);
    return errorResponse(
      404,
      new McpError(ErrorCode.InvalidRequest, "This endpoint does not use OAuth"),
    );
  }
  const document = options.discovery?.match(url);
  if (document) return options.discovery!.serve(req, document);
  if (!originAllowed) {
    return errorResponse(403, new McpError(ErrorCode.InvalidRequest, "Origin not allowed"));
  }
  if (req.method === "GET" && isBrowserVisit(req))
    return landingPage(req.url, auth ? undefined : options.info, options.allow);
  return undefined;
}

function mediaType(value: string | null): string {
  if (value === "application/json") return value;
  return (value ?? "").split(";")[0]!.trim().toLowerCase();
}

function accepts(accept: string, type: string): boolean {
  const [major] = type.split("/");
  return accept.split(",").some((part) => {
    const range = mediaType(part);
    return range === type || range === "*/*" || range === `${major}/*`;
  });
}

/** Verdicts per distinct Accept header: clients send the same few values again and again. */
const acceptVerdicts = new Map<string, boolean>();

/** Whether an Accept header lists both JSON and SSE (spec: transports, sending messages). */
function acceptsBoth(accept: string | null): boolean {
  if (accept === null) return false;
  // Compared as text, the last header is cheaper than a lookup, which hashes the whole of it.
  if (accept === lastAccept.value) return lastAccept.verdict;
  let verdict = acceptVerdicts.get(accept);
  if (verdict === undefined) {
    verdict = accepts(accept, "application/json") && accepts(accept, "text/event-stream");
    if (acceptVerdicts.size < 64) acceptVerdicts.set(accept, verdict);
  }
  lastAccept = { value: accept, verdict };
  return verdict;
}

let lastAccept = { value: "", verdict: false };

/** 415 or 406 for a POST that does not send JSON or does not accept both JSON and SSE. */
export function checkContentTypes(req: McpHttpRequest): McpHttpResponse | undefined {
  if (mediaType(req.header("content-type")) !== "application/json") {
    return errorResponse(
      415,
      new McpError(ErrorCode.InvalidRequest, "Content-Type must be application/json"),
    );
  }
  if (!acceptsBoth(req.header("accept"))) {
    return errorResponse(
      406,
      new McpError(
        ErrorCode.InvalidRequest,
        "Accept must list application/json and text/event-stream",
      ),
    );
  }
  return undefined;
}
