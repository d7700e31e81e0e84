import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { McpHandler } from "../http/handler.js";
import { MAX_BUFFERED, type SseStream, type SseTarget } from "../http/sse.js";
import type { BodyResult, McpHttpRequest, McpHttpResponse } from "../http/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import { respondAndDrain } from "./node-drain.js";

type NodeRequest = IncomingMessage & { body?: unknown; _body?: boolean; originalUrl?: string };

// Every property read on `req` or `res` is a slow lookup under Express, which gives both objects
// a new prototype on every request (V8 finds no shape it has seen, and walks the prototype chain
// at runtime): the wrapper reads each once, and a missing property not at all where it can help.

/** What a body parser (express.json(), body-parser) that already consumed the stream found. */
function parsedBody(req: NodeRequest): BodyResult | undefined {
  // Own: body-parser 1 sets req._body and req.body, 2 sets req.body; checking that first spares
  // a walk up the whole prototype chain on every request no parser saw.
  if (!Object.hasOwn(req, "body")) return undefined;
  if (req._body !== true && (req.body === undefined || !req.readableEnded)) return undefined;
  return typeof req.body === "string"
    ? { kind: "text", text: req.body }
    : { kind: "parsed", value: req.body };
}

/** UTF-8 text of a body (a leading byte-order mark dropped, as TextDecoder does), or unreadable. */
function decodeBody(chunks: Buffer[], total: number): BodyResult {
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  if (!isUtf8(bytes)) return { kind: "unreadable" };
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return { kind: "text", text: bytes.toString("utf8", bom) };
}

/** A Node request seen through the transport-neutral interface, converted once. */
class NodeHttpRequest implements McpHttpRequest {
  readonly method: string;
  readonly localAddress: string | undefined;
  readonly remoteAddress: string | undefined;
  readonly context: (() => unknown) | undefined;
  readonly #req: NodeRequest;
  readonly #headers: IncomingHttpHeaders;
  readonly #socket: Socket;
  readonly #abort = new LazyAbort();

  constructor(req: IncomingMessage, context?: () => unknown) {
    this.#req = req as NodeRequest;
    // A getter on IncomingMessage's prototype: read once, not once per header.
    this.#headers = req.headers;
    this.#socket = req.socket;
    this.context = context;
    this.method = req.method ?? "GET";
    this.localAddress = this.#socket.localAddress;
    this.remoteAddress = this.#socket.remoteAddress;
  }

  /** The connection the request came on. */
  get socket(): Socket {
    return this.#socket;
  }

  /** The client left before the answer was written. */
  disconnected(): void {
    this.#abort.abort(new Error("client disconnected"));
  }

  get url(): string {
    const req = this.#req;
    const encrypted = (this.#socket as { encrypted?: boolean }).encrypted === true;
    return `${encrypted ? "https" : "http"}://${this.#headers.host ?? "localhost"}${req.originalUrl ?? req.url ?? "/"}`;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get aborted(): boolean {
    return this.#abort.aborted;
  }

  get remotePort(): number | undefined {
    return this.#socket.remotePort;
  }

  get httpVersion(): string {
    return this.#req.httpVersion;
  }

  header(name: string): string | null {
    const value = this.#headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }

  body(limit: number): Promise<BodyResult> {
    const req = this.#req;
    const parsed = parsedBody(req);
    if (parsed) return Promise.resolve(parsed);
    if (Number(this.#headers["content-length"]) > limit)
      return Promise.resolve({ kind: "too-large" });
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let total = 0;
      let settled = false;
      const settle = (result: BodyResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      const onEnd = () => {
        if (!settled) settle(decodeBody(chunks, total));
      };
      const onData = (chunk: Buffer) => {
        if (settled) return;
        total += chunk.length;
        if (total <= limit) chunks.push(chunk);
        else {
          req.off("data", onData).off("end", onEnd);
          req.pause();
          chunks.length = 0;
          settle({ kind: "too-large" });
        }
      };
      req.on("data", onData);
      req.on("end", onEnd);
      // The client left before the body ended: no "end" is coming.
      this.#abort.onAbort(() => settle({ kind: "unreadable" }));
    });
  }

  onAbort(listener: () => void): void {
    this.#abort.onAbort(listener);
  }
}

/** Wraps a Node request once; its signal aborts when the client leaves before the response ends. */
export function fromNodeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context?: () => unknown,
): McpHttpRequest {
  const request = new NodeHttpRequest(req, context);
  // A response queued behind a pipelined one emits no "close" when the client leaves: the
  // connection tells it, until its own response closes.
  const unwatch = watchConnection(request);
  // "close" comes once: on() spares once()'s wrapper.
  res.on("close", () => {
    unwatch();
    if (!res.writableFinished) request.disconnected();
  });
  return request;
}

/** Per connection, its requests whose answer is not known yet. */
const unanswered = new WeakMap<Socket, Set<NodeHttpRequest>>();

/**
 * Tells `request` if its connection closes before the returned function is called (by
 * {@link toNodeHandler} once it has the answer). One "close" listener per connection, not one per
 * request on `res`: under Express, which gives `res` a new prototype on every request, adding and
 * firing a listener there costs more than the rest of the adapter. Once the answer is known, what
 * is still running watches on its own (an SSE stream, a streamed body: see writeNodeResponse).
 */
function watchConnection(request: NodeHttpRequest): () => void {
  const socket = request.socket;
  if (socket.destroyed) {
    request.disconnected();
    return () => {};
  }
  let requests = unanswered.get(socket);
  if (requests === undefined) {
    const open = new Set<NodeHttpRequest>();
    socket.once("close", () => {
      for (const each of open) each.disconnected();
      open.clear();
    });
    unanswered.set(socket, open);
    requests = open;
  }
  const set = requests;
  set.add(request);
  return () => set.delete(request);
}

/** Options of {@link toNodeHandler}. */
export interface NodeHandlerOptions<
  App = unknown,
  Req extends IncomingMessage = IncomingMessage,
  Res extends ServerResponse = ServerResponse,
> {
  /**
   * The app's context for a request (the logged-in user, a request id, a database handle),
   * reaching handlers as `ctx.app`; called once per HTTP request, may be async. A throw answers
   * 500 with a JSON-RPC body and goes to `onError`.
   */
  context?: (req: Req, res: Res) => App | Promise<App>;
}

/** A response an SSE stream writes its events to directly: no Web stream, reader or promise. */
class NodeSseTarget implements SseTarget {
  readonly #res: ServerResponse;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  write(text: string): boolean {
    const res = this.#res;
    // Gone: "close" is on its way and ends the stream.
    if (res.destroyed || res.writableEnded) return true;
    res.write(text);
    return res.writableLength <= MAX_BUFFERED;
  }

  end(): void {
    if (!this.#res.writableEnded) this.#res.end();
  }

  destroy(): void {
    this.#res.destroy();
  }
}

/** Streams an SSE response straight to `res`; the stream ends when either side closes. */
function writeSse(res: ServerResponse, response: McpHttpResponse, sse: SseStream): void {
  // The client may have left while the handler ran: the stream must still be told.
  if (res.destroyed) {
    sse.cancel();
    return;
  }
  res.writeHead(response.status, response.headers);
  res.flushHeaders();
  res.once("close", () => sse.cancel());
  sse.attach(new NodeSseTarget(res));
}

/**
 * The response's headers and its body's Content-Length, in one new object: a header set on `res`
 * beforehand would send writeHead down its slower merging path.
 */
function sized(response: McpHttpResponse, body: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in response.headers) headers[name] = response.headers[name]!;
  headers["content-length"] = String(Buffer.byteLength(body));
  return headers;
}

/** Writes a transport-neutral response, honouring backpressure on streamed bodies. */
export async function writeNodeResponse(
  res: ServerResponse,
  response: McpHttpResponse,
): Promise<void> {
  // Before reading body, which would make the stream's ReadableStream.
  if (response.sse?.attachable) {
    writeSse(res, response, response.sse);
    return;
  }
  const { body } = response;
  if (body === null || typeof body === "string") {
    // Sized, not chunked: one write of headers and body, as a plain JSON responder does.
    res.writeHead(response.status, body === null ? response.headers : sized(response, body));
    res.end(body ?? undefined);
    return;
  }
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  // The client may have left while the handler ran: "close" fired already, and a stream nobody
  // reads must still be cancelled, or whatever it holds (a stream slot) is never given back.
  if (res.destroyed) {
    cancel();
    return;
  }
  res.writeHead(response.status, response.headers);
  res.flushHeaders();
  res.once("close", cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const settle = () => {
            res.off("drain", settle).off("close", settle);
            resolve();
          };
          res.once("drain", settle).once("close", settle);
        });
      }
    }
  } catch {
    // the stream was cancelled or errored: end the response below
  } finally {
    res.off("close", cancel);
    if (res.destroyed) cancel();
    if (!res.writableEnded) res.end();
  }
}

/**
 * A `node:http` request listener serving the MCP endpoint.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { createMcpHandler, McpServer } from "mcp-mount";
 * import { toNodeHandler } from "mcp-mount/node";
 *
 * const mcp = createMcpHandler(new McpServer({ name: "notes", version: "1.0.0" }));
 * const handle = toNodeHandler(mcp, {
 *   context: (req) => ({ requestId: req.headers["x-request-id"] }),
 * });
 * createServer(handle).listen(3000);
 * ```
 */
export function toNodeHandler<App = unknown>(
  mcp: McpHandler<App>,
  options: NodeHandlerOptions<App> = {},
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { context } = options;
  return async (req, res) => {
    const request = new NodeHttpRequest(req, context && (() => context(req, res)));
    const unwatch = watchConnection(request);
    let response: McpHttpResponse;
    try {
      response = await mcp.handle(request);
    } finally {
      unwatch();
    }
    // A refused body is still arriving: answer without resetting the connection under it.
    if (response.status === 413 || (response.headers.connection === "close" && !req.readableEnded))
      return respondAndDrain(req, res, response);
    await writeNodeResponse(res, response);
  };
}
