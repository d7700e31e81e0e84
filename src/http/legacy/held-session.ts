import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonObject, JsonRpcMessage, RequestId } from "../../protocol/messages.js";
import {
  type JsonRpcReply,
  PendingRequests,
  settleWithReply,
} from "../../protocol/pending-requests.js";
import type { ChangeSink, OutgoingChange } from "../../server/listen-hub.js";
import type { ChangeEvent } from "../../server/mcp-server.js";
import { publish, subscribe } from "../../store/channels.js";
import type { EventBus, EventLog } from "../../store/types.js";
import type { LazyAbort } from "../../utils/lazy-abort.js";
import { LegacyChannels, type SessionMessage } from "./channels.js";
import { LegacyStream, postStreamId, type StreamEvent } from "./stream.js";

/** What another process tells a held session that the legacy era itself acts on. */
export type RemoteEvent = Extract<SessionMessage, { t: "end" | "take" | "released" }>;

/** Options shared by every held session of a handler. */
export interface HeldSessionOptions {
  log: EventLog;
  bus: EventBus;
  /** This process, for telling its own messages from others'. */
  processId: string;
  /** Longest wait for the client's answer to a server request. */
  requestTimeoutMs: number;
  onError: (error: unknown) => void;
}

const NO_SUBSCRIPTIONS: ReadonlySet<string> = new Set();

/** The session's resource subscriptions as a set; most have none, and share one empty set. */
function subscriptionSet(uris: Iterable<string>): ReadonlySet<string> {
  const set = new Set(uris);
  return set.size === 0 ? NO_SUBSCRIPTIONS : set;
}

function randomId(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 16);
}

/**
 * What this process holds for one legacy session: its live streams, the server requests awaiting
 * an answer, and the client requests still running. Created when first needed and dropped once
 * idle, so an idle session costs only its record. It listens on the session's bus channel, so
 * a reply, a cancellation or a subscription change posted to any process reaches it; the end of
 * the session and a take-over of its GET stream go to the listeners of {@link onRemote}.
 */
export class HeldSession {
  readonly sessionId: string;
  #streams: Map<string, LegacyStream> | undefined;
  #pending: PendingRequests<JsonObject> | undefined;
  // Made when first needed: a session holding only its GET stream keeps neither.
  #running: Map<string, LazyAbort> | undefined;
  #listeners: Set<(event: RemoteEvent) => void> | undefined;
  readonly #options: HeldSessionOptions;
  #standalone: LegacyStream | undefined;
  #subscriptions: ReadonlySet<string>;
  #unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  #nextRequest = 0;

  constructor(sessionId: string, subscriptions: string[], options: HeldSessionOptions) {
    this.sessionId = sessionId;
    this.#subscriptions = subscriptionSet(subscriptions);
    this.#options = options;
  }

  /** The session's GET stream held here, if any. */
  get standalone(): LegacyStream | undefined {
    return this.#standalone;
  }

  /** True once this session listens on its bus channel. */
  get listening(): boolean {
    return this.#unsubscribe !== undefined;
  }

  /** True when nothing here needs the session any more. */
  get idle(): boolean {
    return this.#busy === 0 && !this.#standalone;
  }

  /** True when only a GET stream whose client left keeps the session here. */
  get onlyAwaitingResumption(): boolean {
    return this.#standalone !== undefined && !this.#standalone.attached && this.#busy === 0;
  }

  get #busy(): number {
    return (this.#streams?.size ?? 0) + (this.#pending?.size ?? 0) + (this.#running?.size ?? 0);
  }

  /** The session's resource subscriptions, as this process last heard them. */
  setSubscriptions(uris: Iterable<string>): void {
    this.#subscriptions = subscriptionSet(uris);
  }

  /**
   * Starts listening on the session's bus channel, once. Only what can outlive a quick JSON answer
   * needs it (streams, server requests), so a plain call costs no subscription.
   */
  listen(): Promise<void> {
    const options = this.#options;
    const channel = LegacyChannels.session(this.sessionId);
    this.#unsubscribe ??= subscribe(options.bus, channel, (message) =>
      this.#receive(message),
    ).catch((error: unknown) => {
      options.onError(error);
      return undefined;
    });
    return this.#unsubscribe.then(() => undefined);
  }

  /** Listens for the session's end and its GET stream's take-over; returns the way to stop. */
  onRemote(listener: (event: RemoteEvent) => void): () => void {
    this.#listeners ??= new Set();
    const listeners = this.#listeners;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** Records a client request running here, so a cancellation finds it; returns its untracking. */
  track(requestId: string, abort: LazyAbort): () => void {
    this.#running ??= new Map();
    const running = this.#running;
    running.set(requestId, abort);
    return () => running.delete(requestId);
  }

  /** Cancels a client request running here; false when none by that id runs here. */
  cancel(requestId: string): boolean {
    const running = this.#running?.get(requestId);
    running?.abort(new Error("Cancelled by the client"));
    return running !== undefined;
  }

  /** A new logical stream for a POST response; its events are forwarded on the bus too. */
  openStream(requestId?: RequestId): LegacyStream {
    void this.listen();
    const id = requestId === undefined ? randomId() : postStreamId(randomId(), requestId);
    const channel = LegacyChannels.stream(`${this.sessionId}/${id}`);
    const stream = new LegacyStream({
      sessionId: this.sessionId,
      id,
      log: this.#options.log,
      onError: this.#options.onError,
      forward: (event: StreamEvent) => {
        publish(this.#options.bus, channel, event).catch(this.#options.onError);
      },
    });
    this.#streams ??= new Map();
    this.#streams.set(stream.id, stream);
    return stream;
  }

  /** The POST response stream `id` when its request runs here. */
  postStream(id: string): LegacyStream | undefined {
    return this.#streams?.get(id);
  }

  /** Ends a POST response stream whose request is done, recording its end in the log. */
  finishStream(stream: LegacyStream): void {
    stream.endAndLog();
    this.#streams?.delete(stream.id);
  }

  /** The session's GET stream: `id` resumes a known one (possibly from another process). */
  openStandalone(id?: string): LegacyStream {
    void this.listen();
    if (this.#standalone && (id === undefined || this.#standalone.id === id))
      return this.#standalone;
    this.#standalone = new LegacyStream({
      sessionId: this.sessionId,
      id: id ?? `g${randomId()}`,
      log: this.#options.log,
      onError: this.#options.onError,
    });
    return this.#standalone;
  }

  /** Lets go of the GET stream (handed over, taken, or forgotten) and returns it. */
  takeStandalone(): LegacyStream | undefined {
    const standalone = this.#standalone;
    this.#standalone = undefined;
    return standalone;
  }

  /** Sends a server-to-client request on `stream` and waits for the client's answer. */
  async request(
    stream: LegacyStream,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onSent?: (id: RequestId) => void,
  ): Promise<JsonObject> {
    await this.listen();
    const id = `s${++this.#nextRequest}-${randomId()}`;
    onSent?.(id);
    const timeoutMs = this.#options.requestTimeoutMs;
    this.#pending ??= new PendingRequests();
    return this.#pending.request(id, () => stream.send({ jsonrpc: "2.0", id, method, params }), {
      timeoutMs,
      signal,
      timeoutError: () => new Error(`The client did not answer ${method} within ${timeoutMs} ms`),
      abortError: () => new Error(`${method} was cancelled`),
    });
  }

  /** Routes the client's answer to a server request; false when none waits here. */
  answer(id: RequestId, reply: JsonRpcReply): boolean {
    return this.#pending ? settleWithReply(this.#pending, String(id), reply) : false;
  }

  /** The change-event sink of the GET stream: list changes, and updates of subscribed resources. */
  sink(): ChangeSink {
    return new GetStreamSink(this);
  }

  /** Whether the GET stream wants `event`: list changes, and updates of subscribed resources. */
  wants(event: ChangeEvent): boolean {
    return event.kind === "resource" ? this.#subscriptions.has(event.uri) : event.kind !== "task";
  }

  /** Ends everything this process holds for the session, and stops listening to it. */
  close(reason: string): void {
    for (const abort of this.#running?.values() ?? []) abort.abort(new Error(reason));
    this.#pending?.rejectAll(new McpError(ErrorCode.InternalError, reason));
    for (const stream of this.#streams?.values() ?? []) stream.end();
    this.#standalone?.end();
    this.#streams?.clear();
    this.#running?.clear();
    this.#standalone = undefined;
    this.#listeners?.clear();
    void this.#unsubscribe?.then((unsubscribe) => unsubscribe?.()).catch(this.#options.onError);
  }

  #receive(message: SessionMessage): void {
    switch (message.t) {
      case "reply":
        this.answer(message.id, message);
        break;
      case "cancel":
        this.cancel(message.requestId);
        break;
      case "subs":
        this.setSubscriptions(message.uris);
        break;
      case "alive?":
        if (this.#streams?.has(message.stream)) {
          const channel = LegacyChannels.stream(`${this.sessionId}/${message.stream}`);
          publish(this.#options.bus, channel, { alive: true }).catch(this.#options.onError);
        }
        break;
      default:
        for (const listener of [...(this.#listeners ?? [])]) listener(message);
    }
  }
}

/** The change sink of a session's GET stream: one small object, its methods on the prototype. */
class GetStreamSink implements ChangeSink {
  readonly #held: HeldSession;

  constructor(held: HeldSession) {
    this.#held = held;
  }

  wants(event: ChangeEvent): boolean {
    return this.#held.wants(event);
  }

  deliver(message: JsonRpcMessage, change: OutgoingChange): void {
    this.#held.standalone?.send(message, change.json);
  }

  keepAlive(): void {
    this.#held.standalone?.keepAlive();
  }

  end(): void {
    this.#held.standalone?.end();
  }
}
