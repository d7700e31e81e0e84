import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpHandler } from "../http/handler.js";
import { MAX_BUFFERED, type SseStream, type SseTarget } from "../http/sse.js";
import type { BodyResult, McpHttpRequest, McpHttpResponse } from "../http/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import { respondAndDrain } from "./node-drain.js";

type NodeRequest = IncomingMessage & { body?: unknown; _body?: boolean; originalUrl?: string };

function readNodeBody(req: NodeRequest, limit: number): Promise<BodyResult> {
  // A body parser (express.json(), body-parser) already consumed the stream.
  if (req._body === true || (req.body !== undefined && req.readableEnded)) {
    return Promise.resolve(
      typeof req.body === "string"
        ? { kind: "text", text: req.body }
        : { kind: "parsed", value: req.body },
    );
  }
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) return Promise.resolve({ kind: "too-large" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (result: BodyResult) => {
      req.off("data", onData).off("end", onEnd).off("error", onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        req.pause();
        done({ kind: "too-large" });
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      try {
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
        done({ kind: "text", text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) });
      } catch {
        done({ kind: "unreadable" });
      }
    };
    const onError = () => done({ kind: "unreadable" });
    req.on("data", onData).on("end", onEnd).on("error", onError);
  });
}

/** A Node request seen through the transport-neutral interface, converted once. */
class NodeHttpRequest implements McpHttpRequest {
  readonly method: string;
  readonly localAddress: string | undefined;
  readonly remoteAddress: string | undefined;
  readonly context: (() => unknown) | undefined;
  readonly #req: NodeRequest;
  readonly #abort = new LazyAbort();

  constructor(req: IncomingMessage, res: ServerResponse, context?: () => unknown) {
    this.#req = req as NodeRequest;
    this.context = context;
    this.method = req.method ?? "GET";
    this.localAddress = req.socket.localAddress;
    this.remoteAddress = req.socket.remoteAddress;
    res.once("close", () => {
      if (!res.writableFinished) this.#abort.abort(new Error("client disconnected"));
    });
  }

  get url(): string {
    const req = this.#req;
    const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
    return `${encrypted ? "https" : "http"}://${req.headers.host ?? "localhost"}${req.originalUrl ?? req.url ?? "/"}`;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get aborted(): boolean {
    return this.#abort.aborted;
  }

  get remotePort(): number | undefined {
    return this.#req.socket.remotePort;
  }

  get httpVersion(): string {
    return this.#req.httpVersion;
  }

  header(name: string): string | null {
    const value = this.#req.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }

  body(limit: number): Promise<BodyResult> {
    return readNodeBody(this.#req, limit);
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
  return new NodeHttpRequest(req, res, context);
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
    if (body !== null) res.setHeader("content-length", Buffer.byteLength(body));
    res.writeHead(response.status, response.headers);
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
    const wrapped = fromNodeRequest(req, res, context && (() => context(req, res)));
    const response = await mcp.handle(wrapped);
    // A refused body is still arriving: answer without resetting the connection under it.
    if (response.status === 413 || (response.headers.connection === "close" && !req.readableEnded))
      return respondAndDrain(req, res, response);
    await writeNodeResponse(res, response);
  };
}
