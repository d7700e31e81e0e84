import {
  isNotification,
  isObject,
  isRequest,
  isResponse,
  type JsonObject,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from "../protocol/messages.js";
import { McpHttpError } from "./errors.js";
import { readEvents, sleep } from "./sse.js";
import {
  answerRequest,
  type JsonRpcResponse,
  NO_HANDLERS,
  type RequestOrigin,
  type Wire,
  type WireHandlers,
  type WireRequestOptions,
} from "./wire.js";

/** Headers sent with every HTTP request, or a function computing them (e.g. a fresh token). */
export type HeadersOption = HeadersInit | (() => HeadersInit | Promise<HeadersInit>);

/** Options of the Streamable HTTP transport. */
export interface HttpOptions {
  /** Extra headers on every request, such as `Authorization`. */
  headers?: HeadersOption;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Attempts to resume a dropped legacy stream with `Last-Event-ID`. @default 5 */
  maxReconnects?: number;
  /** Delay before resuming when the server sent no `retry:`. @default 1000 */
  reconnectDelayMs?: number;
}

/** An SSE stream being read: its last event id and the server's retry advice. */
interface StreamCursor {
  lastEventId?: string;
  retryMs?: number;
}

/**
 * Streamable HTTP, both eras. Each request is a POST answered with JSON or an SSE stream;
 * in a legacy session it also carries `Mcp-Session-Id` and the negotiated version, answers
 * server requests met on streams, resumes dropped streams with `Last-Event-ID`, holds the GET
 * stream and ends the session with DELETE.
 */
export class HttpWire implements Wire {
  readonly kind = "http";
  readonly url: URL;
  handlers: WireHandlers = NO_HANDLERS;
  /** The legacy session, once `initialize` minted one. */
  sessionId: string | undefined;
  /** The legacy version, sent as `MCP-Protocol-Version` on every request. */
  legacyVersion: string | undefined;
  /** The options it was made with (the HTTP+SSE fallback reuses them). */
  readonly options: HttpOptions;
  private readonly fetch: typeof fetch;
  private getStream: AbortController | undefined;

  constructor(url: string | URL, options: HttpOptions = {}) {
    this.url = new URL(url);
    this.options = options;
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  private async headers(extra: Record<string, string> = {}): Promise<Headers> {
    const given = this.options.headers;
    const headers = new Headers(typeof given === "function" ? await given() : given);
    headers.set("accept", "application/json, text/event-stream");
    if (this.sessionId) headers.set("mcp-session-id", this.sessionId);
    if (this.legacyVersion) headers.set("mcp-protocol-version", this.legacyVersion);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return headers;
  }

  private async post(
    message: JsonRpcMessage,
    extra: Record<string, string> | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const headers = await this.headers(extra);
    headers.set("content-type", "application/json");
    const response = await this.fetch(this.url, {
      method: "POST",
      headers,
      body: JSON.stringify(message),
      signal,
    });
    const sessionId = response.headers.get("mcp-session-id");
    if (sessionId && "method" in message && message.method === "initialize") {
      this.sessionId = sessionId;
    }
    return response;
  }

  async request(message: JsonRpcRequest, options: WireRequestOptions): Promise<JsonRpcResponse> {
    const sentSession = this.sessionId;
    const response = await this.post(message, options.headers, options.signal);
    // An unknown session is a 404 the legacy client answers by initializing again.
    if (response.status === 404 && sentSession) {
      throw new McpHttpError(404, response.headers, await text(response));
    }
    if (!response.ok) return errorOf(response, message.id);
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream") && response.body) {
      return this.readStream(response.body, message, options);
    }
    const body = parse(await response.text());
    // A fetch that ignores its signal (an in-process handler) still ends the call.
    options.signal?.throwIfAborted();
    if (isObject(body) && isResponse(body) && body.id === message.id) return body;
    throw new McpHttpError(response.status, response.headers, JSON.stringify(body ?? ""));
  }

  /**
   * Reads a request's SSE stream to its response. A legacy stream that ends first is resumed
   * with a GET carrying `Last-Event-ID` (2025-11-25: transports, resumability).
   */
  private async readStream(
    body: ReadableStream<Uint8Array>,
    request: JsonRpcRequest,
    options: WireRequestOptions,
  ): Promise<JsonRpcResponse> {
    const origin: RequestOrigin = { request, signal: options.signal, onInput: options.onInput };
    const cursor: StreamCursor = {};
    let attempts = 0;
    let stream: ReadableStream<Uint8Array> | null = body;
    while (stream) {
      const response = await this.drain(stream, cursor, options.onNotification, origin);
      if (response) return response;
      options.signal?.throwIfAborted();
      // Only legacy streams resume; modern ones never do (spec: streamable-http).
      if (this.legacyVersion === undefined || cursor.lastEventId === undefined) break;
      if (attempts++ >= (this.options.maxReconnects ?? 5)) break;
      await sleep(cursor.retryMs ?? this.options.reconnectDelayMs ?? 1000, options.signal);
      stream = await this.resume(cursor.lastEventId, options.signal);
    }
    throw new Error(
      `The response stream of request ${String(request.id)} ended without a response`,
    );
  }

  /**
   * Dispatches the messages of one SSE stream; returns the response to the origin request if
   * it came. Server requests on it are answered as the origin's (legacy era).
   */
  private async drain(
    stream: ReadableStream<Uint8Array>,
    cursor: StreamCursor,
    onNotification: ((notification: JsonRpcNotification) => void) | undefined,
    origin: RequestOrigin | { request?: undefined; signal: AbortSignal },
  ): Promise<JsonRpcResponse | undefined> {
    const { signal } = origin;
    const id = origin.request?.id;
    try {
      for await (const event of readEvents(stream, (ms) => (cursor.retryMs = ms), signal)) {
        if (event.id !== undefined) cursor.lastEventId = event.id;
        // Priming events carry an id and no data (2025-11-25: transports, resumability).
        const message = event.data ? parse(event.data) : undefined;
        if (!isObject(message)) continue;
        if (isResponse(message)) {
          if (id !== undefined && message.id === id) return message;
        } else if (isRequest(message)) {
          void this.answer(message, origin.request ? (origin as RequestOrigin) : undefined);
        } else if (isNotification(message)) {
          (onNotification ?? this.handlers.notification)(message);
        }
      }
    } catch (error) {
      // A cut connection is resumed like a closed stream; an abort is the caller's.
      if (signal?.aborted || cursor.lastEventId === undefined) throw error;
    }
    return undefined;
  }

  private async resume(
    lastEventId: string,
    signal: AbortSignal | undefined,
  ): Promise<ReadableStream<Uint8Array> | null> {
    const headers = await this.headers({ "last-event-id": lastEventId });
    headers.set("accept", "text/event-stream");
    const response = await this.fetch(this.url, { method: "GET", headers, signal });
    if (!response.ok)
      throw new McpHttpError(response.status, response.headers, await text(response));
    return response.body;
  }

  /** Answers a server request met on a stream with a POST of the response. */
  private async answer(request: JsonRpcRequest, origin?: RequestOrigin): Promise<void> {
    const reply = await answerRequest(this.handlers, request, this, origin);
    try {
      const response = await this.post(reply, undefined, undefined);
      await response.body?.cancel();
    } catch {
      // The server gave up on the session; the request it waits for fails on its side.
    }
  }

  async notify(message: JsonRpcNotification, headers?: Record<string, string>): Promise<void> {
    const response = await this.post(message, headers, undefined);
    if (!response.ok) {
      throw new McpHttpError(response.status, response.headers, await text(response));
    }
    await response.body?.cancel();
  }

  /**
   * Opens the legacy GET stream for server-initiated messages and keeps it open: a dropped
   * stream is resumed with `Last-Event-ID`. A server that offers none (405) is left alone.
   */
  openStream(): void {
    if (this.getStream) return;
    const controller = new AbortController();
    this.getStream = controller;
    void this.holdStream(controller.signal)
      .catch(() => {})
      // Once given up on (a 404 for an expired session), a new session may open another.
      .finally(() => {
        if (this.getStream === controller) this.getStream = undefined;
      });
  }

  private async holdStream(signal: AbortSignal): Promise<void> {
    const cursor: StreamCursor = {};
    let failures = 0;
    while (!signal.aborted && failures <= (this.options.maxReconnects ?? 5)) {
      const headers = await this.headers(
        cursor.lastEventId === undefined ? {} : { "last-event-id": cursor.lastEventId },
      );
      headers.set("accept", "text/event-stream");
      const response = await this.fetch(this.url, { method: "GET", headers, signal }).catch(
        () => undefined,
      );
      if (response && (response.status === 405 || response.status === 404)) return;
      if (response?.ok && response.body) {
        const before = cursor.lastEventId;
        await this.drain(response.body, cursor, undefined, { signal }).catch(() => {});
        failures = cursor.lastEventId === before ? failures + 1 : 0;
      } else {
        await response?.body?.cancel();
        failures++;
      }
      await sleep(cursor.retryMs ?? this.options.reconnectDelayMs ?? 1000, signal);
    }
  }

  /** Stops the GET stream and ends the legacy session with DELETE. */
  async close(): Promise<void> {
    this.getStream?.abort();
    this.getStream = undefined;
    if (!this.sessionId) return;
    const headers = await this.headers();
    this.sessionId = undefined;
    try {
      const response = await this.fetch(this.url, { method: "DELETE", headers });
      await response.body?.cancel();
    } catch {
      // The session ends on its own when it idles out.
    }
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function text(response: Response): Promise<string> {
  return response.text().catch(() => "");
}

/** The JSON-RPC error a failed HTTP answer carries, or an {@link McpHttpError}. */
async function errorOf(response: Response, id: RequestId | undefined): Promise<JsonRpcResponse> {
  const body = await text(response);
  const message = parse(body);
  if (isObject(message) && isObject(message.error) && typeof message.error.code === "number") {
    const error = message.error as JsonRpcResponse & JsonObject;
    return { jsonrpc: "2.0", id: id ?? 0, error: error as never };
  }
  throw new McpHttpError(response.status, response.headers, body);
}
