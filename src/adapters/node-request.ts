import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { BodyResult, McpHttpRequest } from "../http/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import { type Link, LinkedList } from "../utils/linked-list.js";

type NodeRequest = IncomingMessage & { body?: unknown; _body?: boolean; originalUrl?: string };

// Every property read on `req` or `res` is a slow lookup under Express, which gives both objects
// a new prototype on every request (V8 finds no shape it has seen, and walks the prototype chain
// at runtime): the wrapper reads each once, and a missing property not at all where it can help.

/** What a body parser (express.json(), body-parser) that already consumed the stream found. */
function parsedBody(req: NodeRequest): BodyResult | undefined {
  // A parser reads the body to its end, which Node's server marks `complete` first: a body still
  // arriving (a request handed on as it comes, the common case) was read by none. Only `false`
  // tells: a request object without the field (a test injector's, an older Deno's) goes on.
  if (req.complete === false) return undefined;
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
export class NodeHttpRequest implements McpHttpRequest {
  readonly method: string;
  readonly localAddress: string | undefined;
  readonly remoteAddress: string | undefined;
  readonly context: (() => unknown) | undefined;
  readonly #req: NodeRequest;
  readonly #headers: IncomingHttpHeaders;
  readonly #socket: Socket;
  readonly #connection: Connection;
  readonly #abort = new LazyAbort();
  /** This request on its connection's list of unanswered ones, while it watches the connection. */
  #watch: Link<NodeHttpRequest> | undefined;

  constructor(req: IncomingMessage, context?: () => unknown) {
    this.#req = req as NodeRequest;
    // A getter on IncomingMessage's prototype: read once, not once per header.
    this.#headers = req.headers;
    this.#socket = req.socket;
    this.context = context;
    this.method = req.method ?? "GET";
    // Read once per connection: Node's getters cost a call into its handle's bookkeeping each.
    const connection = connectionOf(this.#socket);
    this.#connection = connection;
    this.localAddress = connection.localAddress;
    this.remoteAddress = connection.remoteAddress;
  }

  /** The client left before the answer was written. */
  disconnected(): void {
    this.#abort.abort(new Error("client disconnected"));
  }

  /**
   * Tells this request if its connection closes, until {@link unwatch}: one "close" listener per
   * connection, not one per request on `res`. Under Express, which gives `res` a new prototype on
   * every request, adding and firing a listener there costs more than the rest of the adapter;
   * and a response Node queues behind a pipelined one has no socket, so emits no "close" at all.
   */
  watchConnection(): void {
    const socket = this.#socket;
    if (socket.destroyed) this.disconnected();
    else this.#watch = this.#connection.watch(this);
  }

  /** Stops watching the connection (the answer is known, or its stream has ended). */
  unwatch(): void {
    const link = this.#watch;
    if (link === undefined) return;
    this.#watch = undefined;
    link.list.remove(link);
  }

  get url(): string {
    return `${this.#connection.scheme}://${this.#headers.host ?? "localhost"}${this.target}`;
  }

  get target(): string {
    const req = this.#req;
    return req.originalUrl ?? req.url ?? "/";
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
    // Read here, not in the executor: its closures outlive the body on a stream's req.
    const abort = this.#abort;
    return new Promise((resolve) => {
      let chunks: Buffer[] = [];
      let total = 0;
      let settled = false;
      const settle = (result: BodyResult) => {
        if (settled) return;
        settled = true;
        // The listeners stay on req as long as it lives (a stream's, for hours): not the bytes.
        // (Dropped, not truncated: setting an array's length is a call into V8's runtime.)
        chunks = [];
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
          settle({ kind: "too-large" });
        }
      };
      req.on("data", onData);
      req.on("end", onEnd);
      // The client left before the body ended: no "end" is coming.
      abort.onAbort(() => settle({ kind: "unreadable" }));
    });
  }

  onAbort(listener: () => void): void {
    this.#abort.onAbort(listener);
  }
}

/**
 * Wraps a Node request once; its signal aborts when the client leaves before the response ends.
 * Pass it on to `writeNodeResponse(res, response, request)`, so that a stream Node holds queued
 * behind a pipelined response still ends when the client leaves.
 */
export function fromNodeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context?: () => unknown,
): McpHttpRequest {
  const request = new NodeHttpRequest(req, context);
  // A response queued behind a pipelined one emits no "close" when the client leaves: the
  // connection tells it, until its own response closes.
  request.watchConnection();
  // "close" comes once: on() spares once()'s wrapper.
  res.on("close", () => {
    request.unwatch();
    if (!res.writableFinished) request.disconnected();
  });
  return request;
}

/**
 * What the requests on one connection share: its scheme and addresses, and its requests not answered yet
 * and streams queued behind a pipelined response, each told when it closes.
 */
class Connection {
  readonly scheme: "http" | "https";
  readonly localAddress: string | undefined;
  readonly remoteAddress: string | undefined;
  readonly #socket: Socket;
  #open: LinkedList<NodeHttpRequest> | undefined;

  constructor(socket: Socket) {
    this.#socket = socket;
    this.scheme = (socket as { encrypted?: boolean }).encrypted === true ? "https" : "http";
    this.localAddress = socket.localAddress;
    this.remoteAddress = socket.remoteAddress;
  }

  /** Tells `request` when the connection closes, until it leaves the list. */
  watch(request: NodeHttpRequest): Link<NodeHttpRequest> {
    let open = this.#open;
    if (open === undefined) {
      const list = new LinkedList<NodeHttpRequest>();
      this.#socket.once("close", () => {
        for (const each of list.values()) each.disconnected();
      });
      this.#open = open = list;
    }
    return open.add(request);
  }
}

const connections = new WeakMap<Socket, Connection>();

function connectionOf(socket: Socket): Connection {
  const known = connections.get(socket);
  if (known) return known;
  const connection = new Connection(socket);
  connections.set(socket, connection);
  return connection;
}
