import type { SseStream } from "./streams/sse.js";

/** The body of an incoming request, as the transport could read it. */
export type BodyResult =
  | { kind: "text"; text: string }
  /** A framework already parsed it (Express's `express.json()`). */
  | { kind: "parsed"; value: unknown }
  | { kind: "too-large" }
  | { kind: "unreadable" };

/** A transport-neutral HTTP request: what a Web `Request` or a Node request is turned into. */
export interface McpHttpRequest {
  readonly method: string;
  /** The absolute URL of the request. */
  readonly url: string;
  /**
   * The request target as it came (in origin form, its path and query), when the host has it
   * without building {@link url}: the checks that look for a path on every request read it instead.
   */
  readonly target?: string;
  /** A header value by lower-case name, or null. */
  header(name: string): string | null;
  /** Reads the body, giving up once it exceeds `limit` bytes. */
  body(limit: number): Promise<BodyResult>;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  /**
   * True once the client went away, when the host can tell without building {@link signal}
   * (the Node bridge); undefined otherwise.
   */
  readonly aborted?: boolean | undefined;
  /**
   * Calls `listener` once when the client goes away, if the host can tell without building an
   * AbortSignal (the Node bridge); otherwise `signal` is used.
   */
  onAbort?(listener: () => void): void;
  /** The server-side address the request arrived on, when the host knows it. */
  readonly localAddress?: string;
  /** The peer's address (the client, or the proxy in front), when the host knows it. */
  readonly remoteAddress?: string;
  /** The peer's port, when the host knows it (telemetry's `client.port`). */
  readonly remotePort?: number | undefined;
  /** The HTTP version the request came in (`1.1`, `2`), when the host knows it. */
  readonly httpVersion?: string;
  /**
   * Computes the app's context for this request (an adapter's `context` option); called once,
   * after the Host and Origin checks and before auth. May return a promise.
   */
  readonly context?: () => unknown;
}

/** A transport-neutral HTTP response. */
export interface McpHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string | ReadableStream<Uint8Array> | null;
  /** The SSE stream behind `body`, which a host may write straight to its connection instead. */
  sse?: SseStream;
}
