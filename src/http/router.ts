import type { McpAuth } from "../auth/types.js";
import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcNotification, JsonRpcRequest } from "../protocol/messages.js";
import {
  isNotification,
  isObject,
  isRequest,
  isRequestId,
  isResponse,
} from "../protocol/messages.js";
import { MetaKey } from "../protocol/versions.js";
import { hasScopes, scopesFor } from "../server/access.js";
import { isModernRequest } from "../server/modern-meta.js";
import { McpAttributes } from "../telemetry/attributes.js";
import { ServerOperation } from "../telemetry/server-operation.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { isThenable } from "../utils/thenable.js";
import type { Caller } from "./caller.js";
import type { Discovery } from "./discovery/serve.js";
import type { EndpointServices } from "./endpoint-services.js";
import { insufficientScope } from "./guards/auth-gate.js";
import { type Identified, identifyCaller, type Verified } from "./guards/identify-caller.js";
import { clientAddressOf } from "./guards/proxy.js";
import { type RateLimit, withBudgetHeaders } from "./guards/rate-limit.js";
import { checkContentTypes, checkRequest } from "./guards/request-checks.js";
import type { LegacyEra } from "./legacy/types.js";
import { handleModern } from "./modern/era.js";
import { readMessage } from "./read-message.js";
import { errorResponse, methodNotAllowed } from "./responses.js";
import { shuttingDown } from "./streams/drain.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";

/** The caller of a request with no app context on an endpoint without auth. */
const ANONYMOUS: Identified = { caller: {} };

/** What the router needs: the core, each era, and the endpoint's checks. */
export interface RouterOptions {
  core: EndpointServices;
  legacy: LegacyEra | undefined;
  auth: McpAuth | undefined;
  /** Proxies whose forwarded headers are believed (`trustProxy`). */
  hops: number;
  maxBodyBytes: number;
  allowedHosts: readonly string[] | undefined;
  /** The Server Card and AI Catalog, when served. */
  discovery: Discovery | undefined;
  /** True once the endpoint drains. */
  draining: () => boolean;
}

/**
 * The endpoint's router: checks a request, finds its caller and era, and hands it to that era's
 * strategy (modern, or legacy with or without sessions). It gets the request as its client
 * addressed it (forwarded headers applied) and the verdict of the Origin check (cors.ts).
 */
export function createRouter(
  options: RouterOptions,
): (req: McpHttpRequest, originAllowed: boolean) => Promise<McpHttpResponse> {
  const { core, legacy, auth } = options;
  // Stateless legacy mode serves no GET streams and no DELETE: sessions are what they act on.
  const allow = legacy && !legacy.stateless ? "GET, POST, DELETE" : "POST";
  const checks = { ...options, info: core.server.info, allow };
  const warnUnbound = unboundContextWarning(core, auth);

  // Awaits what may be a promise, inside the try: a failure anywhere is this request's 500.
  return async (req, originAllowed) => {
    try {
      // While draining, only what finishes work already here gets through: a session's replies
      // to server requests and its cancellations (POSTs without an id, told apart in routeMessage).
      if (options.draining() && (req.method !== "POST" || req.header("mcp-session-id") === null))
        return shuttingDown();
      const refused = checkRequest(req, originAllowed, checks);
      if (refused) return await refused;
      if (req.context) warnUnbound();
      // Only what needs it awaits: most requests carry no app context and meet no auth.
      const identified =
        req.context || auth ? await identifyCaller(req, auth, core.reportError) : ANONYMOUS;
      if ("response" in identified) return identified.response;
      const { caller, verified } = identified;
      if (legacy && req.method === "GET") return await legacy.get(req, caller.auth);
      if (legacy && req.method === "DELETE") return await legacy.delete(req, caller.auth);
      if (req.method !== "POST") return methodNotAllowed(allow);
      const unacceptable = checkContentTypes(req);
      if (unacceptable) return unacceptable;
      const read = readMessage(await req.body(options.maxBodyBytes), options.maxBodyBytes);
      if ("response" in read) return read.response;
      const routed = traced(options, req, read.message, caller, verified);
      // A request answered at once (most tool calls) is not awaited: no trip through the queue.
      return isThenable(routed) ? await routed : routed;
    } catch (error) {
      // Last line of defence: one request's failure never reaches the process or another request.
      core.reportError(error);
      return errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error"));
    }
  };
}

/**
 * Warns once when requests carry the app's context but the endpoint has no auth: the app knows
 * its users, yet legacy sessions, tasks and `requestState` are bound to no one, so whoever holds
 * an id may use them. Only the first request can tell: the context is the adapter's option.
 */
function unboundContextWarning(core: EndpointServices, auth: McpAuth | undefined): () => void {
  let warned = auth !== undefined;
  return () => {
    if (warned) return;
    warned = true;
    core.warn(
      "mcp-mount: requests carry the app's context but the endpoint has no auth, so legacy sessions, tasks and requestState are bound to no user; pass auth: appAuth(...) to bind them to the app's login",
    );
  };
}

/**
 * Routes a message inside its span (telemetry): the dispatcher ends the span of what it runs;
 * what is answered without it (initialize, session methods, notifications, refusals, listen
 * streams once open) ends with that answer.
 */
function traced(
  options: RouterOptions,
  req: McpHttpRequest,
  message: JsonObject,
  caller: Caller,
  verified: Verified | undefined,
): Promise<McpHttpResponse> | McpHttpResponse {
  const telemetry = options.core.dispatchServices.telemetry;
  const pending = telemetry?.pending;
  if (pending) return pending.then(() => traced(options, req, message, caller, verified));
  if (!telemetry?.live || typeof message.method !== "string" || isResponse(message))
    return routeMessage(options, req, message, caller, verified);
  if (telemetry.passesThrough(isObject(message.params) ? message.params : undefined))
    return routeMessage(options, req, message, caller, verified);
  const named = message as JsonObject & { method: string };
  return routeTraced(options, req, named, caller, verified, telemetry);
}

/** {@link traced} with telemetry on: the message's span around its routing. */
async function routeTraced(
  options: RouterOptions,
  req: McpHttpRequest,
  message: JsonObject & { method: string },
  caller: Caller,
  verified: Verified | undefined,
  telemetry: Telemetry,
): Promise<McpHttpResponse> {
  const operation = new ServerOperation(
    telemetry,
    {
      method: message.method,
      id: isRequestId(message.id) ? message.id : undefined,
      params: isObject(message.params) ? message.params : undefined,
    },
    {
      transport: "tcp",
      clientAddress: clientAddressOf(req, options.hops),
      // Behind a proxy the socket's port is the proxy's, not the client's.
      clientPort: options.hops === 0 ? req.remotePort : undefined,
      httpVersion: req.httpVersion,
    },
  );
  try {
    const response = await routeMessage(options, req, message, { ...caller, operation }, verified);
    if (!operation.claimed) {
      const body = typeof response.body === "string" ? response.body : null;
      describeAnswered(operation, req, message, response.headers, body);
      operation.endWithBody(body);
    }
    return response;
  } catch (error) {
    operation.end({ exception: error });
    throw error;
  }
}

/**
 * Records the era, protocol version and session of a message answered without the dispatcher
 * (which records them itself): from a modern message's `_meta`, or a legacy request's headers;
 * an initialize's from its answer, which names the negotiated version and the new session.
 */
function describeAnswered(
  operation: ServerOperation,
  req: McpHttpRequest,
  message: JsonObject,
  headers: Record<string, string>,
  body: string | null,
): void {
  const method = String(message.method);
  const params = isObject(message.params) ? message.params : undefined;
  if (isModernRequest(method, params)) {
    const version = isObject(params?._meta) ? params._meta[MetaKey.protocolVersion] : undefined;
    if (typeof version === "string") operation.describe("modern", version);
    return;
  }
  const sessionId = req.header("mcp-session-id") ?? headers["mcp-session-id"];
  const version =
    method === "initialize" ? negotiatedVersion(body) : req.header("mcp-protocol-version");
  if (version) operation.describe("legacy", version, sessionId ?? undefined);
  else if (sessionId) operation.set(McpAttributes.sessionId, sessionId);
}

/** The protocol version an initialize answer settled on. */
function negotiatedVersion(body: string | null): string | undefined {
  try {
    const version = body ? JSON.parse(body)?.result?.protocolVersion : undefined;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Routes one JSON-RPC message to its era, after the scope check its method needs and, for a
 * request, its charge to the caller's rate limit.
 */
function routeMessage(
  options: RouterOptions,
  req: McpHttpRequest,
  message: JsonObject,
  caller: Caller,
  verified: Verified | undefined,
): Promise<McpHttpResponse> | McpHttpResponse {
  const { core, legacy, auth, draining } = options;
  const id = isRequestId(message.id) ? message.id : undefined;
  const sessionHeader = req.header("mcp-session-id") !== null;
  if (isResponse(message)) {
    // Answers to server requests belong to legacy sessions; the modern era has none.
    if (legacy && sessionHeader) return legacy.post(req, message, caller);
    return errorResponse(
      400,
      new McpError(ErrorCode.InvalidRequest, "Clients must not send responses to this endpoint"),
    );
  }
  if (!isRequest(message) && !isNotification(message)) {
    return errorResponse(400, new McpError(ErrorCode.InvalidRequest, "Invalid JSON-RPC message"), {
      id,
    });
  }
  if (draining() && id !== undefined) return shuttingDown(id);
  if (auth && verified && id !== undefined) {
    const needed = scopesFor(core.server, message.method, message.params ?? {});
    if (!hasScopes(verified.auth.scopes, needed))
      return insufficientScope(auth, verified.resource, verified.auth.scopes, needed!, id);
  }
  // Notifications (and, above, responses) are free: only requests start work.
  if (core.rateLimit && isRequest(message))
    return charged(core.rateLimit, options, req, message, caller);
  return toEra(options, req, message, caller);
}

/** A request charged to its caller's budget: 429 over it, else served with the budget's headers. */
async function charged(
  rateLimit: RateLimit,
  options: RouterOptions,
  req: McpHttpRequest,
  message: JsonRpcRequest,
  caller: Caller,
): Promise<McpHttpResponse> {
  const client = options.core.clientOf(req, caller.auth);
  const charge = await rateLimit.charge(client, message, caller);
  if (!charge.serve) return charge.response;
  // The handler may charge more as it runs (ctx.charge), to the same budget.
  const charging: Caller = { ...caller, charge: (points) => rateLimit.chargeMore(client, points) };
  return withBudgetHeaders(await toEra(options, req, message, charging), charge.headers);
}

/** Hands a request or notification to its era's strategy. */
function toEra(
  { core, legacy }: RouterOptions,
  req: McpHttpRequest,
  message: JsonRpcRequest | JsonRpcNotification,
  caller: Caller,
): Promise<McpHttpResponse> | McpHttpResponse {
  const id = "id" in message ? message.id : undefined;
  if (isModernRequest(message.method, message.params))
    return handleModern(core, req, message, caller);
  if (
    legacy &&
    (message.method === "initialize" || req.header("mcp-session-id") !== null || legacy.stateless)
  ) {
    return legacy.post(req, message, caller);
  }
  return errorResponse(
    400,
    new McpError(ErrorCode.InvalidParams, `_meta["${MetaKey.protocolVersion}"] is required`),
    { id },
  );
}
