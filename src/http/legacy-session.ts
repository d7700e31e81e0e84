import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import type { ChangeEvent } from "../server/mcp-server.js";
import { publish, subscribe } from "../store/channels.js";
import type { EventBus, EventLog } from "../store/types.js";
import type { LazyAbort } from "../utils/lazy-abort.js";
import { Channels } from "./channels.js";
import { LegacyStream, postStreamId, type StreamEvent } from "./legacy-stream.js";
import type { ChangeSink } from "../server/listen-hub.js";

interface PendingRequest {
  resolve(result: JsonObject): void;
  reject(error: unknown): void;
}

/**
 * What one process tells the others about a session, on the session's bus channel: the answer
 * to a server request, a cancellation, new resource subscriptions, a GET stream taken over, or
 * the session's end. Whichever process holds the affected state acts on it.
 */
export type SessionMessage =
  | {
      t: "reply";
      id: string;
      result?: JsonObject;
      error?: { code: number; message: string; data?: unknown };
    }
  | { t: "cancel"; requestId: string }
  | { t: "subs"; uris: string[] }
  | { t: "take"; stream: string; by: string }
  /** The process that held a GET stream let go of it; its events up to `seq` are in the log. */
  | { t: "released"; stream: string; seq: number; by: string }
  /** Is the process running this POST stream's request still there? (Answered on the stream.) */
  | { t: "alive?"; stream: string }
  | { t: "end" };

/** Options shared by every session runtime of a handler. */
export interface SessionRuntimeOptions {
  log: EventLog;
  bus: EventBus;
  /** This process, for telling its own messages from others'. */
  processId: string;
  /** Longest wait for the client's answer to a server request. */
  requestTimeoutMs: number;
  onError: (error: unknown) => void;
}

function randomId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

/**
 * What this process holds for one legacy session: its live streams, the server requests awaiting
 * an answer, and the client requests still running. Created when first needed and dropped once
 * empty, so an idle session costs only its record. It listens on the session's bus channel, so
 * a reply, a cancellation or a subscription change posted to any process reaches it.
 */
export class SessionRuntime {
  readonly sessionId: string;
  readonly streams = new Map<string, LegacyStream>();
  readonly pending = new Map<string, PendingRequest>();
  readonly inflight = new Map<string, LazyAbort>();
  standalone: LegacyStream | undefined;
  subscriptions: Set<string>;
  #unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  #nextRequest = 0;
  readonly #options: SessionRuntimeOptions;
  /** Called when another process ended the session or took its GET stream. */
  onRemote: (message: SessionMessage) => void = () => {};

  constructor(sessionId: string, subscriptions: string[], options: SessionRuntimeOptions) {
    this.sessionId = sessionId;
    this.subscriptions = new Set(subscriptions);
    this.#options = options;
  }

  /** True once this runtime listens on the session's bus channel. */
  get listening(): boolean {
    return this.#unsubscribe !== undefined;
  }

  /**
   * Starts listening on the session's bus channel, once. Only what can outlive a quick JSON answer
   * needs it (streams, server requests), so a plain call costs no subscription.
   */
  listen(): Promise<void> {
    const options = this.#options;
    this.#unsubscribe ??= subscribe(options.bus, Channels.session(this.sessionId), (message) =>
      this.#receive(message),
    ).catch((error: unknown) => {
      options.onError(error);
      return undefined;
    });
    return this.#unsubscribe.then(() => undefined);
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

  /** A new logical stream for a POST response; detached events are forwarded on the bus. */
  openStream(requestId?: RequestId): LegacyStream {
    void this.listen();
    const id = requestId === undefined ? randomId() : postStreamId(randomId(), requestId);
    const channel = Channels.stream(`${this.sessionId}/${id}`);
    const stream = new LegacyStream({
      sessionId: this.sessionId,
      id,
      log: this.#options.log,
      onError: this.#options.onError,
      forward: (event: StreamEvent) => {
        publish(this.#options.bus, channel, event).catch(this.#options.onError);
      },
    });
    this.streams.set(stream.id, stream);
    return stream;
  }

  /** The session's GET stream: `id` resumes a known one (possibly from another process). */
  openStandalone(id?: string): LegacyStream {
    void this.listen();
    if (this.standalone && (id === undefined || this.standalone.id === id)) return this.standalone;
    this.standalone = new LegacyStream({
      sessionId: this.sessionId,
      id: id ?? `g${randomId()}`,
      log: this.#options.log,
      onError: this.#options.onError,
    });
    return this.standalone;
  }

  /** Sends a server-to-client request on `stream` and waits for the client's answer. */
  async request(
    stream: LegacyStream,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    await this.listen();
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

  /** Routes the client's answer to a server request; false when none waits here. */
  answer(
    id: RequestId,
    message: { result?: unknown; error?: { code: number; message: string; data?: unknown } },
  ): boolean {
    const pending = this.pending.get(String(id));
    if (!pending) return false;
    if (message.error)
      pending.reject(new McpError(message.error.code, message.error.message, message.error.data));
    else pending.resolve(isObject(message.result) ? message.result : {});
    return true;
  }

  /** The change-event sink of the GET stream: list changes, and updates of subscribed resources. */
  sink(): ChangeSink {
    return {
      wants: (event: ChangeEvent) =>
        event.kind === "resource" ? this.subscriptions.has(event.uri) : event.kind !== "task",
      deliver: (message: JsonRpcMessage) => this.standalone?.send(message),
      keepAlive: () => this.standalone?.keepAlive(),
      end: () => this.standalone?.end(),
    };
  }

  /** Ends everything this process holds for the session, and stops listening to it. */
  close(reason: string): void {
    for (const abort of this.inflight.values()) abort.abort(new Error(reason));
    for (const pending of this.pending.values())
      pending.reject(new McpError(ErrorCode.InternalError, reason));
    for (const stream of this.streams.values()) stream.end();
    this.standalone?.end();
    this.streams.clear();
    this.inflight.clear();
    this.standalone = undefined;
    void this.#unsubscribe?.then((unsubscribe) => unsubscribe?.()).catch(this.#options.onError);
  }

  #receive(message: SessionMessage): void {
    switch (message.t) {
      case "reply":
        this.answer(message.id, message);
        break;
      case "cancel":
        this.inflight.get(message.requestId)?.abort(new Error("Cancelled by the client"));
        break;
      case "subs":
        this.subscriptions = new Set(message.uris);
        break;
      case "alive?":
        if (this.streams.has(message.stream)) {
          const channel = Channels.stream(`${this.sessionId}/${message.stream}`);
          publish(this.#options.bus, channel, { alive: true }).catch(this.#options.onError);
        }
        break;
      default:
        this.onRemote(message);
    }
  }
}
