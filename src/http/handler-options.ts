import type { McpAuth } from "../auth/types.js";
import type { ExtensionOptions } from "../server/ext/index.js";
import type { McpServer } from "../server/mcp-server.js";
import type { McpStore } from "../store/types.js";
import type { TelemetryOptions } from "../telemetry/telemetry.js";
import type { ServerCardOptions } from "./discovery/server-card.js";
import type { RequestInfo } from "./endpoint-services.js";
import type { CorsOptions } from "./guards/cors.js";
import type { AllowedOrigins } from "./guards/origin.js";
import type { TrustProxy } from "./guards/proxy.js";
import type { RateLimitOptions } from "./guards/rate-limit.js";
import type { LegacyOptions } from "./legacy/types.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";
import type { FetchOptions } from "./web.js";

/** Options of `createMcpHandler`. */
export interface McpHandlerOptions<App = unknown> extends ExtensionOptions {
  /**
   * OpenTelemetry: a SERVER span per JSON-RPC message and `mcp.server.operation.duration`, per
   * the MCP semantic conventions, through the global providers an OpenTelemetry SDK registers
   * (or the ones given); `mode: "propagate"` only makes the caller's trace context active in
   * handlers; `mode: "off"` or `false` turns it off. @default {} (full)
   */
  telemetry?: TelemetryOptions | false;
  /** Shared state: sessions, bus, nonces. @default memoryStore() */
  store?: McpStore;
  /**
   * Bearer-token auth (`jwtAuth()` or `bearerAuth()` from `mcp-mount/auth`): challenges, scope
   * checks, Protected Resource Metadata, and sessions and state bound to the principal.
   */
  auth?: McpAuth;
  /** Key material for sealing `requestState`; share it across processes. @default a random per-process key */
  secret?: string | Uint8Array;
  /**
   * Browser origins allowed to call the endpoint, for both the Origin check (403) and CORS:
   * `"*"`, a list of origins (`"https://app.example.com"`) or RegExps, or a function (may be
   * async). @default same-origin, plus loopback origins on a loopback host
   */
  allowedOrigins?: AllowedOrigins;
  /**
   * CORS for the origins `allowedOrigins` admits: preflights answered before auth, MCP's headers
   * allowed and exposed on every answer; `false` leaves CORS to the app (the Origin check stays).
   * @default {}
   */
  cors?: CorsOptions | false;
  /**
   * Host header values (names, or name:port) the endpoint answers to. @default on a loopback
   * socket, loopback names only; otherwise any
   */
  allowedHosts?: readonly string[];
  /**
   * Proxies in front of the endpoint whose `X-Forwarded-Host`, `-Proto` and `-For` headers are
   * believed: `true` for one, or their number. The Host and Origin checks, the auth resource URL
   * and the client address then use the forwarded values; set `allowedHosts` to the public names
   * (a loopback socket otherwise still answers loopback names only, forwarded or not).
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
  /** Leading bits an anonymous IPv6 caller is counted by, for per-client caps and budgets. @default 64 */
  ipv6Subnet?: number;
  /**
   * A budget of points per window per principal (else client id, else client address), kept in
   * the store so every process sharing it spends one budget; over it, 429 with `Retry-After`,
   * `RateLimit` and `RateLimit-Policy`. Needs the optional peer `rate-limiter-flexible`.
   * @default none
   */
  rateLimit?: RateLimitOptions;
  /**
   * The Server Card (SEP-2127) at `<endpoint>/server-card` and the AI Catalog at
   * `/.well-known/ai-catalog.json`, generated from the server's info and the endpoint's public
   * URL: fields given here replace the generated ones; `false` serves neither.
   * @default {} without auth; off behind auth unless given
   */
  serverCard?: ServerCardOptions | false;
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
  /** Whether it serves a Server Card (`serverCard`): adapters then pass it `<path>/server-card`. */
  readonly servesServerCard: boolean;
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
