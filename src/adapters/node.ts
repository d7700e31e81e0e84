import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpHandler } from "../http/handler.js";
import { onClientGone } from "../http/streams/client-gone.js";
import { MAX_BUFFERED, type SseStream, type SseTarget } from "../http/streams/sse.js";
import type { McpHttpRequest, McpHttpResponse } from "../http/types.js";
import { respondAndDrain } from "./node-drain.js";
import { NodeHttpRequest } from "./node-request.js";

export { fromNodeRequest } from "./node-request.js";

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
function writeSse(
  res: ServerResponse,
  response: McpHttpResponse,
  sse: SseStream,
  request: McpHttpRequest | undefined,
): void {
  // The client may have left while the handler ran: the stream must still be told.
  if (res.destroyed) {
    sse.cancel();
    return;
  }
  res.writeHead(response.status, response.headers);
  res.flushHeaders();
  const cancel = () => sse.cancel();
  // "close" comes once: on() spares once()'s wrapper, a stream's for as long as it is open.
  res.on("close", cancel);
  // Queued behind a pipelined response, `res` has no socket and emits no "close".
  if (request) onClientGone(request, cancel);
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

/** Whether `response` is written as a stream; an SSE stream's body is not built to tell. */
function isStreamed(response: McpHttpResponse): boolean {
  return (
    response.sse !== undefined || (response.body !== null && typeof response.body !== "string")
  );
}

/** Writes a response whose body is whole: sized, not chunked, one write as a plain JSON responder does. */
function writeWhole(res: ServerResponse, response: McpHttpResponse, body: string | null): void {
  res.writeHead(response.status, body === null ? response.headers : sized(response, body));
  res.end(body ?? undefined);
}

/**
 * Writes a transport-neutral response, honouring backpressure on streamed bodies. Given the
 * request it answers (the one {@link fromNodeRequest} made), a streamed response also ends when
 * the client leaves while Node holds it queued behind a pipelined one.
 */
export async function writeNodeResponse(
  res: ServerResponse,
  response: McpHttpResponse,
  request?: McpHttpRequest,
): Promise<void> {
  // Before reading body, which would make the stream's ReadableStream.
  if (response.sse?.attachable) {
    writeSse(res, response, response.sse, request);
    return;
  }
  const { body } = response;
  if (body === null || typeof body === "string") {
    writeWhole(res, response, body);
    return;
  }
  const reader = body.getReader();
  // A write waiting for "drain" on a response that never gets a socket waits for good: the
  // cancel wakes it.
  let wake: (() => void) | undefined;
  const cancel = () => {
    reader.cancel().catch(() => {});
    wake?.();
  };
  // The client may have left while the handler ran: "close" fired already, and a stream nobody
  // reads must still be cancelled, or whatever it holds (a stream slot) is never given back.
  if (res.destroyed) {
    cancel();
    return;
  }
  res.writeHead(response.status, response.headers);
  res.flushHeaders();
  res.once("close", cancel);
  if (request) onClientGone(request, cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const settle = () => {
            wake = undefined;
            res.off("drain", settle).off("close", settle);
            resolve();
          };
          wake = settle;
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
    request.watchConnection();
    let response: McpHttpResponse;
    try {
      response = await mcp.handle(request);
    } catch (error) {
      request.unwatch();
      throw error;
    }
    // A stream (SSE, or a body read piece by piece) queued behind a pipelined response has no
    // socket yet, and emits no "close" if the client leaves first: it stays on the connection's
    // watch until it closes.
    if (isStreamed(response) && res.socket === null) {
      // "close" comes once: on() spares once()'s wrapper.
      res.on("close", () => request.unwatch());
      return writeNodeResponse(res, response, request);
    }
    request.unwatch();
    // A refused body is still arriving: answer without resetting the connection under it.
    if (response.status === 413 || (response.headers.connection === "close" && !req.readableEnded))
      return respondAndDrain(req, res, response);
    // A whole body (most answers) is written here and now: no promise for it. (An SSE answer's
    // body is not read to tell: that would build its stream.)
    const body = response.sse === undefined ? response.body : undefined;
    if (body === null || typeof body === "string") writeWhole(res, response, body);
    else await writeNodeResponse(res, response);
  };
}
