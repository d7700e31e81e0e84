import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../protocol/messages.js";
import type { ChangeEvent } from "../server/mcp-server.js";
import type { EventLog } from "../store/types.js";
import type { LazyAbort } from "../utils/lazy-abort.js";
import type { ChangeSink } from "./listen-hub.js";
import { LegacyStream } from "./legacy-stream.js";

interface PendingRequest {
  resolve(result: JsonObject): void;
  reject(error: unknown): void;
}

/** Options shared by every session runtime of a handler. */
export interface SessionRuntimeOptions {
  log: EventLog;
  /** Longest wait for the client's answer to a server request. */
  requestTimeoutMs: number;
  onError: (error: unknown) => void;
}

function randomId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

/**
 * What this process holds for one legacy session: its live streams, the server requests awaiting
 * an answer, and the client requests still running (for `notifications/cancelled`). Created when
 * first needed and dropped once empty, so an idle session costs only its record.
 */
export class SessionRuntime {
  readonly sessionId: string;
  readonly streams = new Map<string, LegacyStream>();
  readonly pending = new Map<string, PendingRequest>();
  readonly inflight = new Map<string, LazyAbort>();
  standalone: LegacyStream | undefined;
  subscriptions: Set<string>;
  #nextRequest = 0;
  readonly #options: SessionRuntimeOptions;

  constructor(sessionId: string, subscriptions: string[], options: SessionRuntimeOptions) {
    this.sessionId = sessionId;
    this.subscriptions = new Set(subscriptions);
    this.#options = options;
  }

  /** True when nothing here needs the runtime any more. */
  get idle(): boolean {
    return (
      this.streams.size === 0 &&
      this.pending.size === 0 &&
      this.inflight.size === 0 &&
      !this.standalone
    );
  }

  /** A new logical stream for a POST response. */
  openStream(): LegacyStream {
    const stream = new LegacyStream({
      sessionId: this.sessionId,
      id: randomId(),
      log: this.#options.log,
      onError: this.#options.onError,
    });
    this.streams.set(stream.id, stream);
    return stream;
  }

  /** The session's GET stream, created on first use. */
  openStandalone(): LegacyStream {
    this.standalone ??= new LegacyStream({
      sessionId: this.sessionId,
      id: `g${randomId()}`,
      log: this.#options.log,
      onError: this.#options.onError,
    });
    return this.standalone;
  }

  /** Sends a server-to-client request on `stream` and waits for the client's answer. */
  request(
    stream: LegacyStream,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const id = `s${++this.#nextRequest}-${randomId()}`;
    return new Promise<JsonObject>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.pending.delete(id);
      };
      const onAbort = () => {
        cleanup();
        reject(new Error(`${method} was cancelled`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `The client did not answer ${method} within ${this.#options.requestTimeoutMs} ms`,
          ),
        );
      }, this.#options.requestTimeoutMs);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, {
        resolve: (result) => {
          cleanup();
          resolve(result);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      });
      stream.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** Routes the client's answer to a server request; false when no such request waits. */
  answer(
    id: RequestId,
    message: { result?: unknown; error?: { code: number; message: string; data?: unknown } },
  ): boolean {
    const pending = this.pending.get(String(id));
    if (!pending) return false;
    if (message.error)
      pending.reject(new McpError(message.error.code, message.error.message, message.error.data));
    else pending.resolve((message.result ?? {}) as JsonObject);
    return true;
  }

  /** The change-event sink of the GET stream: list changes, and updates of subscribed resources. */
  sink(): ChangeSink {
    return {
      wants: (event: ChangeEvent) => event.kind !== "resource" || this.subscriptions.has(event.uri),
      deliver: (message: JsonRpcMessage) => this.standalone?.send(message),
      keepAlive: () => this.standalone?.keepAlive(),
      end: () => this.standalone?.end(),
    };
  }

  /** Ends everything: the session was deleted or the server is closing. */
  close(reason: string): void {
    for (const controller of this.inflight.values()) controller.abort(new Error(reason));
    for (const pending of this.pending.values())
      pending.reject(new McpError(ErrorCode.InternalError, reason));
    for (const stream of this.streams.values()) stream.end();
    this.standalone?.end();
    this.streams.clear();
    this.inflight.clear();
    this.standalone = undefined;
  }
}
