import type { McpAuth } from "../auth/types.js";
import { ErrorCode, McpError } from "../protocol/errors.js";
import {
  isNotification,
  isObject,
  isRequest,
  isRequestId,
  isResponse,
  type RequestId,
} from "../protocol/messages.js";
import { MetaKey } from "../protocol/versions.js";
import { hasScopes, principalKey, scopesFor } from "../server/access.js";
import { ServerChannels } from "../server/channels.js";
import { createExtensions, type ExtensionOptions } from "../server/ext/index.js";
import { ListenHub } from "../server/listen-hub.js";
import type { McpServer } from "../server/mcp-server.js";
import { isModernRequest } from "../server/modern-meta.js";
import { createStateSealer } from "../server/request-state.js";
import type { AuthInfo } from "../server/types.js";
import { publish } from "../store/channels.js";
import { memoryStore } from "../store/memory.js";
import type { McpStore } from "../store/types.js";
import { authenticate, insufficientScope, isMetadataRequest, serveMetadata } from "./auth-gate.js";
import { type Caller, type HandlerCore, type RequestInfo, toRequestInfo } from "./core.js";
import { InFlight } from "./in-flight.js";
import { isBrowserVisit, landingPage } from "./landing-page.js";
import { createLegacyEra, type LegacyOptions } from "./legacy/era.js";
import { handleModern } from "./modern.js";
import { isHostAllowed, isOriginAllowed } from "./origin.js";
import { asForwarded, clientAddressOf, proxyHops, type TrustProxy } from "./proxy.js";
import { errorResponse, methodNotAllowed } from "./responses.js";
import { StreamSlots } from "./stream-slots.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";
import { type FetchOptions, fromWebRequest, toWebResponse } from "./web.js";

/** Options of {@link createMcpHandler}. */
export interface McpHandlerOptions<App = unknown> extends ExtensionOptions {
  /** Shared state: sessions, bus, nonces. @default memoryStore() */
  store?: McpStore;
  /**
   * Bearer-token auth (`jwtAuth()` or `bearerAuth()` from `mcp-mount/auth`): challenges, scope
   * checks, Protected Resource Metadata, and sessions and state bound to the principal.
   */
  auth?: McpAuth;
  /** Key material for sealing `requestState`; share it across processes. @default a random per-process key */
  secret?: string | Uint8Array;
  /** Origins allowed to call the endpoint; "*" allows any. @default same-origin, plus loopback on loopback hosts */
  allowedOrigins?: readonly string[] | "*";
  /**
   * Host header values (names, or name:port) the endpoint answers to. @default on a loopback
   * socket, loopback names only; otherwise any
   */
  allowedHosts?: readonly string[];
  /**
   * Proxies in front of the endpoint whose `X-Forwarded-Host`, `-Proto` and `-For` headers are
   * believed: `true` for one, or their number. The Host and Origin checks, the auth resource URL
   * and the client address then use the forwarded values; set `allowedHosts` to the public names.
   * @default false
   */
  trustProxy?: TrustProxy;
  /** Largest request body in bytes. @default 4 MiB */
  maxBodyBytes?: number;
  /** Lifetime of a sealed `requestState` in milliseconds. @default 300_000 */
  stateTtlMs?: number;
  /** Accept each `requestState` only once, across every process sharing the store. @default false */
  singleUseState?: boolean;
  /** Interval of SSE keep-alive comments on long-lived streams. @default 15_000 */
  keepAliveMs?: number;
  /** Most long-lived streams (listen, legacy GET) open at once in this process. @default 10_000 */
  maxStreams?: number;
  /**
   * Most long-lived streams one client holds open in this process: its principal (issuer and
   * subject) with auth, else its address (`trustProxy` decides which). 429 beyond. @default 100
   */
  maxStreamsPerClient?: number;
  /** Serve legacy clients (2025-03-26 to 2025-11-25) too; false serves modern clients only. @default true */
  legacy?: boolean | LegacyOptions;
  /** Called with errors the client only sees a safe summary of. */
  onError?: (error: unknown, context: { method?: string; app?: App }) => void;
  /** Called once per request when it ends, for metrics and tracing. */
  onRequest?: (info: RequestInfo<App>) => void;
}

/** An MCP endpoint: a Web `fetch` handler plus a transport-neutral one for adapters. */
export interface McpHandler<App = unknown> {
  readonly server: McpServer<App>;
  /** Serves a Web `Request`; bound, so it can be passed around. */
  readonly fetch: (request: Request, options?: FetchOptions<App>) => Promise<Response>;
  /** Serves a transport-neutral request; adapters use it to skip Web object allocation. */
  readonly handle: (request: McpHttpRequest) => Promise<McpHttpResponse>;
  /** Resolves once change notifications published by other processes reach this one. */
  readonly ready: Promise<void>;
  /** What this process holds now, for metrics: long-lived streams and legacy sessions. */
  stats(): { streams: number; sessionsHeld: number };
  /**
   * Whether this process should get traffic: false while it drains or while the store cannot be
   * reached. Mount it where the orchestrator probes readiness (200 when ready, else 503).
   */
  health(): Promise<McpHealth>;
  /**
   * Drains, then releases the store: new requests get 503 with Retry-After and
   * `Connection: close` (a load balancer retries them elsewhere); listen streams end with their
   * result and legacy GET streams are handed to other processes at once; requests in flight get
   * `graceMs` to finish, after which each is answered with a retryable "shutting down" error
   * (on its stream, in the replay log). Resolves once every request has its answer.
   */
  close(options?: CloseOptions): Promise<void>;
}

/** Options of {@link McpHandler.close}. */
export interface CloseOptions {
  /** How long requests in flight may go on before they are answered for. @default 0 */
  graceMs?: number;
}

/** What {@link McpHandler.health} reports. */
export interface McpHealth {
  /** Serving, and the store answers: send traffic here. */
  ready: boolean;
  /** `close()` was called: requests in flight are finishing, new ones are refused. */
  draining: boolean;
  /** Whether the store answered a ping just now. */
  store: "up" | "down";
}

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

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
  let verdict = acceptVerdicts.get(accept);
  if (verdict === undefined) {
    verdict = accepts(accept, "application/json") && accepts(accept, "text/event-stream");
    if (acceptVerdicts.size < 64) acceptVerdicts.set(accept, verdict);
  }
  return verdict;
}

/** Creates the MCP endpoint for `server`. */
export function createMcpHandler<App = unknown>(
  server: McpServer<App>,
  options: McpHandlerOptions<App> = {},
): McpHandler<App> {
  const store = options.store ?? memoryStore();
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const hops = proxyHops(options.trustProxy);
  const reportError = (error: unknown, method?: string, app?: unknown) => {
    try {
      const context: { method?: string; app?: App } = {};
      if (method !== undefined) context.method = method;
      if (app !== undefined) context.app = app as App;
      options.onError?.(error, context);
    } catch {
      // A failing hook must not change the response.
    }
  };
  const extensions = createExtensions(
    {
      server,
      store,
      publish: (event) => {
        publish(store.bus, ServerChannels.changes, event).catch((error: unknown) =>
          reportError(error),
        );
      },
      onError: (error) => reportError(error),
    },
    options,
  );
  const inflight = new InFlight();
  const core: HandlerCore = {
    server,
    runtime: {
      sealer: createStateSealer(options.secret),
      nonces: store.nonces,
      stateTtlMs: options.stateTtlMs ?? 300_000,
      singleUseState: options.singleUseState ?? false,
      extensions,
    },
    inflight,
    hub: new ListenHub(server, {
      bus: store.bus,
      keepAliveMs: options.keepAliveMs ?? 15_000,
      onError: (error) => reportError(error),
    }),
    slots: new StreamSlots({
      max: options.maxStreams ?? 10_000,
      maxPerClient: options.maxStreamsPerClient ?? 100,
    }),
    clientOf: (req, caller) => {
      if (caller) return `p:${principalKey(caller)}`;
      const address = clientAddressOf(req, hops);
      return address === undefined ? undefined : `a:${address}`;
    },
    hideUnauthorized: options.auth?.hideUnauthorized ?? false,
    reportError,
    observe: (event) => {
      if (!options.onRequest) return;
      try {
        options.onRequest(toRequestInfo(event) as RequestInfo<App>);
      } catch (error) {
        reportError(error);
      }
    },
  };
  const legacy =
    options.legacy === false
      ? undefined
      : createLegacyEra(core, store, options.legacy === true ? {} : (options.legacy ?? {}));
  const auth = options.auth;
  // Stateless legacy mode serves no GET streams and no DELETE: sessions are what they act on.
  const allow = legacy && !legacy.stateless ? "GET, POST, DELETE" : "POST";
  let closing = false;
  let closed: Promise<void> | undefined;
  const shuttingDown = (id?: RequestId) =>
    errorResponse(503, new McpError(ErrorCode.InternalError, "Server is shutting down"), {
      id,
      headers: {
        "retry-after": "1",
        connection: "close",
      },
    });

  async function handle(req: McpHttpRequest): Promise<McpHttpResponse> {
    try {
      return await route(req);
    } catch (error) {
      // Last line of defence: one request's failure never reaches the process or another request.
      reportError(error);
      return errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error"));
    }
  }

  async function route(received: McpHttpRequest): Promise<McpHttpResponse> {
    const req = hops > 0 ? asForwarded(received, hops) : received;
    // While draining, only what finishes work already here gets through: a session's replies to
    // server requests and its cancellations (POSTs without an id, told apart below).
    if (closing && (req.method !== "POST" || req.header("mcp-session-id") === null))
      return shuttingDown();
    // Behind a trusted proxy the socket is the proxy's: its loopback address says nothing.
    const local = hops > 0 ? undefined : req.localAddress;
    if (!isHostAllowed(req.header("host"), local, options.allowedHosts)) {
      return errorResponse(
        403,
        new McpError(
          ErrorCode.InvalidRequest,
          "Host not allowed: list the endpoint's public names in allowedHosts (and set trustProxy behind a proxy)",
        ),
      );
    }
    // Public, and read cross-origin by browser clients: served before the Origin check.
    if (isMetadataRequest(req)) {
      if (auth && (!auth.app || auth.app.acceptsBearer)) return serveMetadata(auth, req);
      return errorResponse(
        404,
        new McpError(ErrorCode.InvalidRequest, "This endpoint does not use OAuth"),
      );
    }
    if (!isOriginAllowed(req.header("origin"), req.header("host"), options.allowedOrigins)) {
      return errorResponse(403, new McpError(ErrorCode.InvalidRequest, "Origin not allowed"));
    }
    if (req.method === "GET" && isBrowserVisit(req))
      return landingPage(req.url, auth ? undefined : server.info, allow);
    // The app's context, once per HTTP request: the app's login (appAuth) may need it.
    let app: unknown;
    if (req.context) {
      try {
        app = await req.context();
      } catch (error) {
        reportError(error);
        return errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error"));
      }
    }
    let verified: { auth: AuthInfo; resource: string } | undefined;
    if (auth) {
      const outcome = await authenticate(auth, req, app, (error) =>
        reportError(error, undefined, app),
      );
      if ("response" in outcome) return outcome.response;
      verified = outcome;
      if (!hasScopes(verified.auth.scopes, auth.requiredScopes))
        return insufficientScope(
          auth,
          verified.resource,
          verified.auth.scopes,
          auth.requiredScopes,
          undefined,
        );
    }
    const caller: Caller =
      app === undefined ? { auth: verified?.auth } : { auth: verified?.auth, app };
    if (legacy && req.method === "GET") return legacy.get(req, caller.auth);
    if (legacy && req.method === "DELETE") return legacy.delete(req, caller.auth);
    if (req.method !== "POST") return methodNotAllowed(allow);
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
    const body = await req.body(maxBody);
    let message: unknown;
    if (body.kind === "too-large")
      return errorResponse(
        413,
        new McpError(ErrorCode.InvalidRequest, `Request body exceeds ${maxBody} bytes`),
      );
    if (body.kind === "unreadable")
      return errorResponse(
        400,
        new McpError(ErrorCode.ParseError, "Parse error: body could not be read"),
      );
    if (body.kind === "parsed") message = body.value;
    else {
      try {
        message = JSON.parse(body.text);
      } catch {
        return errorResponse(
          400,
          new McpError(ErrorCode.ParseError, "Parse error: body is not valid JSON"),
        );
      }
    }
    if (Array.isArray(message))
      return errorResponse(
        400,
        new McpError(ErrorCode.InvalidRequest, "Batch requests are not supported"),
      );
    if (!isObject(message))
      return errorResponse(400, new McpError(ErrorCode.InvalidRequest, "Invalid JSON-RPC message"));
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
      return errorResponse(
        400,
        new McpError(ErrorCode.InvalidRequest, "Invalid JSON-RPC message"),
        { id },
      );
    }
    if (closing && id !== undefined) return shuttingDown(id);
    if (auth && verified && id !== undefined) {
      const needed = scopesFor(server, message.method, message.params ?? {});
      if (!hasScopes(verified.auth.scopes, needed))
        return insufficientScope(auth, verified.resource, verified.auth.scopes, needed!, id);
    }
    if (isModernRequest(message.method, message.params))
      return handleModern(core, req, message, caller);
    if (legacy && (message.method === "initialize" || sessionHeader || legacy.stateless)) {
      return legacy.post(req, message, caller);
    }
    return errorResponse(
      400,
      new McpError(ErrorCode.InvalidParams, `_meta["${MetaKey.protocolVersion}"] is required`),
      { id },
    );
  }

  async function storeAnswers(): Promise<"up" | "down"> {
    if (!store.ping) return "up";
    try {
      await store.ping();
      return "up";
    } catch {
      return "down";
    }
  }

  async function drain(graceMs: number): Promise<void> {
    const started = Date.now();
    // Long-lived streams first, so their clients reconnect elsewhere while the rest finishes.
    await legacy?.handOver();
    core.hub.endStreams(server.info);
    await inflight.settle(graceMs);
    const left = Math.max(0, graceMs - (Date.now() - started));
    await Promise.all(extensions.map((extension) => extension.whenIdle?.(left)));
    await legacy?.close();
    for (const extension of extensions) await extension.close?.();
    // Only now: calls that ran during the grace may still have announced changes.
    await core.hub.close(server.info);
    await store.close();
  }

  return {
    server,
    fetch: async (request, fetchOptions) =>
      toWebResponse(await handle(fromWebRequest(request, fetchOptions))),
    handle,
    ready: core.hub.ready,
    stats: () => ({ streams: core.slots.size, sessionsHeld: legacy?.sessionsHeld ?? 0 }),
    async health() {
      const store = await storeAnswers();
      return { ready: !closing && store === "up", draining: closing, store };
    },
    close(closeOptions = {}) {
      closing = true;
      closed ??= drain(closeOptions.graceMs ?? 0);
      return closed;
    },
  };
}
