import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import {
  isNotification,
  isObject,
  isRequest,
  isResponse,
  type JsonObject,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResult,
} from "../protocol/messages.js";
import { PendingRequests } from "../protocol/pending-requests.js";
import { MetaKey } from "../protocol/versions.js";
import { ServerOperation } from "../telemetry/server-operation.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import type { InputHandlers, Notification } from "./types.js";

/** A JSON-RPC response: a result or an error. */
export type JsonRpcResponse = JsonRpcResult | JsonRpcErrorResponse;

/** Options of one request on a wire. */
export interface WireRequestOptions {
  signal?: AbortSignal;
  /** HTTP headers of the request (ignored by message wires). */
  headers?: Record<string, string>;
  /** Notifications that belong to this request: its progress, logs, listen stream. */
  onNotification?: (notification: Notification) => void;
  /** The request's own input callbacks, for the server requests that come with it. */
  onInput?: InputHandlers | undefined;
}

/** The client request a server request came with (it arrived on that request's stream). */
export interface RequestOrigin {
  request: JsonRpcRequest;
  signal?: AbortSignal | undefined;
  /** The request's own input callbacks (`RequestOptions.onInput`), when it brought some. */
  onInput?: InputHandlers | undefined;
}

/** What a wire hands up: notifications no request owns, and requests from the server. */
export interface WireHandlers {
  notification(notification: Notification): void;
  /** Answers a server request (legacy era); throws an McpError to answer with an error. */
  request(
    method: string,
    params: JsonObject | undefined,
    origin?: RequestOrigin,
  ): Promise<JsonObject>;
  /** The client's telemetry: each server request it answers is a SERVER span (conventions). */
  telemetry?: Telemetry | undefined;
}

/** Moves JSON-RPC messages between the client and one server: HTTP, stdio or HTTP+SSE. */
export interface Wire {
  /** `http` mirrors headers and cancels by closing streams; the others are message channels. */
  readonly kind: "http" | "stdio" | "sse";
  handlers: WireHandlers;
  /** The legacy session id (HTTP), once `initialize` minted one. */
  sessionId?: string | undefined;
  /** The negotiated legacy version, for wires that repeat it in headers. */
  legacyVersion?: string | undefined;
  request(message: JsonRpcRequest, options: WireRequestOptions): Promise<JsonRpcResponse>;
  notify(message: JsonRpcNotification, headers?: Record<string, string>): Promise<void>;
  /** Starts whatever the legacy era listens on besides responses (the HTTP GET stream). */
  openStream?(): void;
  close(): Promise<void>;
}

/** Handlers that ignore everything, until a connection installs its own. */
export const NO_HANDLERS: WireHandlers = {
  notification() {},
  request: async (method) => {
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  },
};

/**
 * Answers a server request through `handlers`, as a JSON-RPC response message; with telemetry,
 * inside the SERVER span the conventions give the receiver of a request (the client, here), its
 * parent the context the server put in `params._meta`.
 */
export function answerRequest(
  handlers: WireHandlers,
  request: JsonRpcRequest,
  wire: Pick<Wire, "kind" | "legacyVersion" | "sessionId">,
  origin?: RequestOrigin,
): Promise<JsonRpcResponse> {
  const telemetry = handlers.telemetry;
  const pending = telemetry?.pending;
  if (pending) return pending.then(() => answerRequest(handlers, request, wire, origin));
  if (!telemetry?.live) return respond(handlers, request, origin);
  const operation = new ServerOperation(telemetry, request, {
    transport: wire.kind === "stdio" ? "pipe" : "tcp",
  });
  if (wire.legacyVersion) operation.describe("legacy", wire.legacyVersion, wire.sessionId);
  return operation
    .run(() => respond(handlers, request, origin))
    .then((reply) => {
      operation.end("error" in reply ? { error: reply.error } : { result: reply.result });
      return reply;
    });
}

async function respond(
  handlers: WireHandlers,
  request: JsonRpcRequest,
  origin?: RequestOrigin,
): Promise<JsonRpcResponse> {
  try {
    const result = await handlers.request(request.method, request.params, origin);
    return { jsonrpc: "2.0", id: request.id, result };
  } catch (error) {
    const known = isMcpError(error)
      ? { code: error.code, message: error.message }
      : { code: ErrorCode.InternalError, message: String((error as Error)?.message ?? error) };
    return { jsonrpc: "2.0", id: request.id, error: known };
  }
}

/** What a request awaiting its response keeps, so its notifications find it. */
interface PendingEntry {
  options: WireRequestOptions;
  progressToken: unknown;
}

/**
 * A wire over a bidirectional message channel (stdio, the HTTP+SSE transport): requests are
 * matched to responses by id; notifications go to the request whose progress token or
 * listen subscription they name, the rest to the handlers.
 */
export class MessageWire implements Wire {
  readonly kind: "stdio" | "sse";
  handlers: WireHandlers = NO_HANDLERS;
  private readonly pending = new PendingRequests<JsonRpcResponse, PendingEntry>();
  private readonly write: (message: JsonRpcMessage) => Promise<void>;
  private closedWith: unknown;

  constructor(kind: "stdio" | "sse", write: (message: JsonRpcMessage) => Promise<void>) {
    this.kind = kind;
    this.write = write;
  }

  /** Feeds one message read from the channel. */
  receive(message: unknown): void {
    if (!isObject(message)) return;
    if (isResponse(message)) {
      if (message.id !== undefined) this.pending.resolve(message.id, message);
    } else if (isRequest(message)) {
      void answerRequest(this.handlers, message, this).then((reply) =>
        this.write(reply).catch(() => {}),
      );
    } else if (isNotification(message)) {
      const owner = this.ownerOf(message);
      if (owner?.options.onNotification) owner.options.onNotification(message);
      else this.handlers.notification(message);
    }
  }

  /** Fails every pending request: the channel is gone. */
  fail(error: unknown): void {
    this.closedWith = error;
    this.pending.rejectAll(error);
  }

  private ownerOf(message: JsonRpcNotification): PendingEntry | undefined {
    const params = message.params ?? {};
    const meta = isObject(params._meta) ? params._meta : {};
    const subscription = meta[MetaKey.subscriptionId];
    if (typeof subscription === "string" || typeof subscription === "number") {
      return this.pending.payload(subscription);
    }
    const token = params.progressToken;
    if (token === undefined) return undefined;
    return this.pending.find((entry) => entry?.progressToken === token);
  }

  request(message: JsonRpcRequest, options: WireRequestOptions): Promise<JsonRpcResponse> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const meta = isObject(message.params?._meta) ? message.params._meta : {};
    return this.pending.request(message.id, () => this.write(message), {
      signal: options.signal,
      payload: { options, progressToken: meta.progressToken },
    });
  }

  notify(message: JsonRpcNotification): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    this.fail(new Error("Connection closed"));
  }
}
