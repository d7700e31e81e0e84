import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { JsonObject, RequestId } from "../../protocol/messages.js";
import {
  type JsonRpcReply,
  PendingRequests,
  settleWithReply,
} from "../../protocol/pending-requests.js";
import { type ChangeSink, sessionWants } from "../../server/listen-hub.js";
import type { ChangeEvent } from "../../server/mcp-server.js";
import { publish, subscribe } from "../../store/channels.js";
import type { EventBus, EventLog, LeaseStore } from "../../store/types.js";
import type { LazyAbort } from "../../utils/lazy-abort.js";
import { LegacyChannels, type SessionMessage } from "./channels.js";
import { cancelledAmong } from "./early-cancel.js";
import { GetStreamSink, subscriptionSet } from "./get-stream-sink.js";
import { RunningRequests } from "./running-requests.js";
import { getStreamKey, WAITING_MARGIN_MS, waitingKey } from "./session-leases.js";
import { LegacyStream, type StreamEvent } from "./stream.js";
import { postStreamId, randomId } from "./stream-ids.js";

/** What another process tells a held session that the legacy era itself acts on. */
export type RemoteEvent = Extract<SessionMessage, { t: "end" | "take" | "released" }>;

/** Options shared by every held session of a handler. */
export interface HeldSessionOptions {
  log: EventLog;
  bus: EventBus;
  /** This process, for telling its own messages from others'. */
  processId: string;
  /** Where this process says which server requests it awaits (see {@link waitingKey}). */
  leases: LeaseStore;
  /** Resolves once this process is known as present to the others (see Presence). */
  present: () => Promise<void>;
  /** Longest wait for the client's answer to a server request. */
  requestTimeoutMs: number;
  onError: (error: unknown) => void;
  /** Hears each held session's remote events, before its {@link HeldSession.onRemote} ones. */
  onRemote?: (held: HeldSession, event: RemoteEvent) => void;
}

/**
 * What this process holds for one legacy session: its live streams, the server requests awaiting
 * an answer, and the client requests still running. Created when first needed and dropped once
 * idle, so an idle session costs only its record. It listens on the session's bus channel, so
 * a reply, a cancellation or a subscription change posted to any process reaches it; the end of
 * the session and a take-over of its GET stream go to `options.onRemote`, then {@link onRemote}'s.
 */
export class HeldSession {
  readonly sessionId: string;
  #streams: Map<string, LegacyStream> | undefined;
  #pending: PendingRequests<JsonObject> | undefined;
  /** Its client requests running here. */
  readonly #running = new RunningRequests();
  #listeners: Set<(event: RemoteEvent) => void> | undefined;
  readonly #options: HeldSessionOptions;
  #standalone: LegacyStream | undefined;
  #subscriptions: ReadonlySet<string>;
  #unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  #nextRequest = 0;
  #closed = false; // Once closed, remote events reach no listener.

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
    return (this.#streams?.size ?? 0) + (this.#pending?.size ?? 0) + this.#running.size;
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
    this.#unsubscribe ??= subscribe(options.bus, channel, (message) => this.#receive(message))
      .then((stop) => {
        this.#cancelEarly();
        return stop;
      })
      .catch((error: unknown) => {
        options.onError(error);
        return undefined;
      });
    return this.#unsubscribe.then(() => undefined);
  }

  /** Cancels requests that ran before this listened, if a cancellation was kept meanwhile. */
  #cancelEarly(): void {
    const running = this.#running.ids();
    if (running.length === 0) return;
    cancelledAmong(this.#options.leases, this.sessionId, running).then((ids) => {
      for (const id of ids) this.cancel(id);
    }, this.#options.onError);
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
    return this.#running.track(requestId, abort);
  }

  /** Cancels a client request running here; false when none by that id runs here. */
  cancel(requestId: string): boolean {
    return this.#running.cancel(requestId);
  }

  /** A new logical stream for a POST response; its events are forwarded on the bus too. */
  openStream(requestId?: RequestId): LegacyStream {
    void this.listen();
    // Whoever resumes this stream elsewhere reads this process's presence to know it runs.
    this.#options.present().catch(this.#options.onError);
    const id = postStreamId(randomId(), this.#options.processId, requestId);
    const channel = LegacyChannels.stream(this.sessionId, id);
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
    // Its lease goes once every event it sent is logged: a taker that sees the lease gone
    // reads them all from the log.
    if (standalone) void standalone.flushed().then(() => this.#releaseGetLease());
    return standalone;
  }

  /** Frees the GET stream's lease, if this process still holds it. */
  #releaseGetLease(): void {
    const { leases, processId, onError } = this.#options;
    leases.release(getStreamKey(this.sessionId), processId).catch(onError);
  }

  /** Sends a server-to-client request on `stream` and waits for the client's answer. */
  async request(
    stream: LegacyStream,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onSent?: (id: RequestId) => void,
  ): Promise<JsonObject> {
    const options = this.#options;
    const id = `s${++this.#nextRequest}-${randomId()}`;
    const timeoutMs = options.requestTimeoutMs;
    // Before the request goes out: the answer may be posted to another process at once, which
    // routes it here only while this lease says this process waits for it.
    const waiting = waitingKey(this.sessionId, id);
    await Promise.all([
      this.listen(),
      options.present(),
      options.leases.acquire(waiting, options.processId, timeoutMs + WAITING_MARGIN_MS),
    ]);
    onSent?.(id);
    this.#pending ??= new PendingRequests();
    try {
      return await this.#pending.request(
        id,
        () => stream.send({ jsonrpc: "2.0", id, method, params }),
        {
          timeoutMs,
          signal,
          timeoutError: () =>
            new Error(`The client did not answer ${method} within ${timeoutMs} ms`),
          abortError: () => new Error(`${method} was cancelled`),
        },
      );
    } finally {
      options.leases.release(waiting, options.processId).catch(options.onError);
    }
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
    return sessionWants(event, this.#subscriptions);
  }

  /** Ends everything this process holds for the session, and stops listening to it. */
  close(reason: string): void {
    this.#running.abortAll(reason);
    this.#pending?.rejectAll(new McpError(ErrorCode.InternalError, reason));
    for (const stream of this.#streams?.values() ?? []) stream.end();
    if (this.#standalone) {
      this.#standalone.end();
      this.#releaseGetLease();
    }
    this.#streams?.clear();
    this.#standalone = undefined;
    this.#closed = true;
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
        // The process that stored the change answers its client once the GET stream's holder
        // has it: on a Redis Cluster this message and the next change travel different paths.
        if (message.ack !== undefined && this.#standalone) {
          const channel = LegacyChannels.session(this.sessionId);
          publish(this.#options.bus, channel, { t: "subs-ok", ack: message.ack }).catch(
            this.#options.onError,
          );
        }
        break;
      case "subs-ok":
        break;
      default:
        if (this.#closed) break;
        this.#options.onRemote?.(this, message);
        for (const listener of [...(this.#listeners ?? [])]) listener(message);
    }
  }
}
