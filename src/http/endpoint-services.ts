import type { JsonObject } from "../protocol/messages.js";
import type { ListenHub } from "../server/listen-hub.js";
import type { McpServer } from "../server/mcp-server.js";
import type { DispatchServices } from "../server/method-handlers.js";
import type { AuthInfo, Era, Implementation } from "../server/types.js";
import { nameOf } from "./caller.js";
import type { RateLimit } from "./guards/rate-limit.js";
import type { InFlight } from "./streams/in-flight.js";
import type { StreamSlots } from "./streams/stream-slots.js";
import type { McpHttpRequest } from "./types.js";

/** What the `onRequest` hook learns about each request. */
export interface RequestInfo<App = unknown> {
  era: Era;
  method: string;
  /** Tool or prompt name, or resource URI, when the method has one. */
  name?: string;
  durationMs: number;
  status: number;
  client?: Implementation;
  /** The verified principal, when the endpoint uses auth (its token only if exposed). */
  auth?: AuthInfo;
  /** The app's context for the request (the adapter's `context` function's result). */
  app?: App;
  /** The JSON-RPC error the request ended with, if any. */
  error?: unknown;
}

/** The shared parts of one handler, passed to each era's strategy. */
export interface EndpointServices {
  server: McpServer;
  dispatchServices: DispatchServices;
  hub: ListenHub;
  /** Requests running now, which a drain waits for. */
  inflight: InFlight;
  /** Admission of long-lived connections, per process and per client. */
  slots: StreamSlots;
  /** The budget every JSON-RPC request is charged to (`rateLimit`), when set. */
  rateLimit?: RateLimit;
  /**
   * Who a request comes from, for per-client limits: the principal (issuer and subject), else
   * its client id, else the client address; undefined when none is known.
   */
  clientOf(req: McpHttpRequest, auth: AuthInfo | undefined): string | undefined;
  /** Lists hold only what the caller has the scopes for (auth's `hideUnauthorized`). */
  hideUnauthorized: boolean;
  reportError(error: unknown, method?: string, app?: unknown): void;
  /** Tells the app about a risky setup: through `onError` when it has one, else `console.warn`. */
  warn(message: string): void;
  /** Tells the app's `onRequest` hook about an answered request; absent without one. */
  observe?(event: {
    era: Era;
    method: string;
    params: JsonObject;
    started: number;
    client?: Implementation;
    auth?: AuthInfo;
    app?: unknown;
    status: number;
    error?: unknown;
  }): void;
}

/** Turns an observed request into the `onRequest` hook's shape. */
export function toRequestInfo(
  event: Parameters<NonNullable<EndpointServices["observe"]>>[0],
): RequestInfo {
  const info: RequestInfo = {
    era: event.era,
    method: event.method,
    durationMs: performance.now() - event.started,
    status: event.status,
  };
  const name = nameOf(event.params);
  if (name !== undefined) info.name = name;
  if (event.client) info.client = event.client;
  if (event.auth) info.auth = event.auth;
  if (event.app !== undefined) info.app = event.app;
  if (event.error !== undefined) info.error = event.error;
  return info;
}
