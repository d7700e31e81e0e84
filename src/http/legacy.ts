import { ErrorCode, McpError } from "../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResult,
} from "../protocol/messages.js";
import { isObject, isRequest, isResponse } from "../protocol/messages.js";
import { paramsDepthError } from "../protocol/params.js";
import { isLogLevel, LEGACY_VERSIONS } from "../protocol/versions.js";
import { principalKey } from "../server/access.js";
import { initializeParamsError, initializeResult, negotiateVersion } from "../server/initialize.js";
import type { AuthInfo } from "../server/types.js";
import { publish, subscribe } from "../store/channels.js";
import type { McpStore, SessionRecord } from "../store/types.js";
import { toBase64Url } from "../utils/base64.js";
import { Channels, type Handoff } from "./channels.js";
import type { Caller, HandlerCore } from "./core.js";
import { resumeElsewhere } from "./legacy-resume.js";
import { PRIMING_VERSION, runLegacyRequest } from "./legacy-run.js";
import { type SessionMessage, SessionRuntime } from "./legacy-session.js";
import { type LegacyStream, streamOfEventId } from "./legacy-stream.js";
import { AwaitingStreams } from "./legacy-waiting.js";
import { errorResponse, methodNotAllowed } from "./responses.js";
import { SessionCache } from "./session-cache.js";
import { SessionQuota } from "./session-quota.js";
import { SSE_HEADERS, SseStream } from "./sse.js";
import { granted } from "./stream-slots.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";

/** Options of the legacy era (protocol 2025-03-26 to 2025-11-25). */
export interface LegacyOptions {
  /** Serve legacy clients with no session at all, for serverless hosts. @default false */
  stateless?: boolean;
  /** Most live sessions; the longest idle are evicted beyond it. @default 50_000 */
  maxSessions?: number;
  /**
   * Most sessions one client (its principal, else its address) opens through this process; its
   * own oldest are ended beyond it, never another client's. @default 1_000
   */
  maxSessionsPerClient?: number;
  /** Longest wait for a client's answer to a server request. @default 300_000 */
  requestTimeoutMs?: number;
  /** `retry:` hint, in ms, when the server closes a stream early (2025-11-25 polling). @default 1_000 */
  retryMs?: number;
  /** How often GET streams left by their clients are checked against expired sessions. @default 60_000 */
  sweepIntervalMs?: number;
  /**
   * How long a GET stream whose client left goes on logging for a resumption with
   * `Last-Event-ID` (here or on another process); after it, what it missed is not kept.
   * @default 120_000
   */
  resumeWindowMs?: number;
  /**
   * How often a POST stream resumed on this process, whose request runs on another, sends a
   * keep-alive and checks that the other process is still there; after two checks without an
   * answer it ends with a retryable error. @default 10_000
   */
  resumeCheckMs?: number;
}

const SESSION_METHODS = new Set([
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

type Message = JsonRpcRequest | JsonRpcNotification | JsonRpcResult | JsonRpcErrorResponse;

/** Longest wait for another process to take a GET stream over on shutdown. */
const HANDOFF_WAIT_MS = 1_000;
/**
 * Longest wait for the old holder of a GET stream to say it let go. Generous: stopping early
 * means both processes deliver for a moment, and the client hears a change twice.
 */
const TAKEOVER_WAIT_MS = 3_000;

/** The id of a request, to echo in errors; undefined for notifications and responses. */
function requestIdOf(message: Message): JsonRpcRequest["id"] | undefined {
  return "id" in message && !isResponse(message as unknown as JsonObject)
    ? (message as JsonRpcRequest).id
    : undefined;
}

/** A session-store operation failed: Redis down, most likely. */
class StoreUnavailable extends Error {
  constructor(readonly cause: unknown) {
    super("Session store unavailable");
  }
}

function newSessionId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
}

function sessionError(
  status: 400 | 404,
  message: string,
  id?: JsonRpcRequest["id"],
): McpHttpResponse {
  return errorResponse(status, new McpError(ErrorCode.InvalidRequest, message), { id });
}

/** Serves legacy clients on the same endpoint as modern ones (PROTOCOL §3). */
export class LegacyEra {
  readonly #core: HandlerCore;
  readonly #store: McpStore;
  readonly #options: Required<LegacyOptions>;
  readonly #runtimes = new Map<string, SessionRuntime>();
  readonly #sinks = new Map<string, () => void>();
  readonly #processId = crypto.randomUUID();
  readonly #sweeper: ReturnType<typeof setInterval>;
  readonly #handoffs: Promise<() => Promise<void>>;
  readonly #cache: SessionCache;
  /** GET streams whose client left, awaiting a resumption. */
  readonly #awaiting: AwaitingStreams;
  /** Sessions opened here, per client (see `maxSessionsPerClient`). */
  readonly #quota: SessionQuota;
  /** Takeovers waiting for the old holder of a GET stream to let go, by stream id. */
  readonly #released = new Map<string, (seq: number | undefined) => void>();
  #closing = false;
  #handingOver: Promise<void> | undefined;

  constructor(core: HandlerCore, store: McpStore, options: LegacyOptions) {
    this.#core = core;
    this.#store = store;
    this.#options = {
      stateless: options.stateless ?? false,
      maxSessions: options.maxSessions ?? 50_000,
      maxSessionsPerClient: options.maxSessionsPerClient ?? 1_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 300_000,
      retryMs: options.retryMs ?? 1_000,
      sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
      resumeWindowMs: options.resumeWindowMs ?? 120_000,
      resumeCheckMs: options.resumeCheckMs ?? 10_000,
    };
    this.#awaiting = new AwaitingStreams({
      windowMs: this.#options.resumeWindowMs,
      capacity: core.slots.capacity,
      perClient: core.slots.perClient,
      forget: (sessionId, standalone) => this.#forget(sessionId, standalone),
    });
    this.#quota = new SessionQuota(this.#options.maxSessionsPerClient);
    this.#sweeper = setInterval(() => void this.#sweep(), this.#options.sweepIntervalMs);
    this.#cache = new SessionCache(
      store.sessions,
      store.bus,
      Math.min(this.#options.maxSessions, 10_000),
      (error) => core.reportError(error),
    );
    this.#handoffs = subscribe(store.bus, Channels.handoff, (handoff) => {
      this.#adopt(handoff).catch((error: unknown) => core.reportError(error));
    });
    this.#handoffs.catch((error: unknown) => core.reportError(error));
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  /** Legacy sessions this process holds state for (streams, waits, running requests). */
  get held(): number {
    return this.#runtimes.size;
  }

  /** True when legacy clients are served without sessions. */
  get stateless(): boolean {
    return this.#options.stateless;
  }

  /** Serves a POST: `initialize`, or a message of an existing session. */
  post(req: McpHttpRequest, message: Message, caller: Caller = {}): Promise<McpHttpResponse> {
    return this.#available(() => this.#post(req, message, caller), requestIdOf(message));
  }

  /** Serves a GET: the session's standalone stream, or the resumption of any of its streams. */
  get(req: McpHttpRequest, auth?: AuthInfo): Promise<McpHttpResponse> {
    return this.#available(() => this.#get(req, auth));
  }

  /** Serves a DELETE: ends the session and its streams. */
  delete(req: McpHttpRequest, auth?: AuthInfo): Promise<McpHttpResponse> {
    return this.#available(() => this.#delete(req, principalKey(auth)));
  }

  /** Runs `serve`, answering 503 with Retry-After while the store cannot be reached. */
  async #available(
    serve: () => Promise<McpHttpResponse>,
    id?: JsonRpcRequest["id"],
  ): Promise<McpHttpResponse> {
    try {
      return await serve();
    } catch (error) {
      if (!(error instanceof StoreUnavailable)) throw error;
      this.#core.reportError(error.cause);
      return errorResponse(
        503,
        new McpError(ErrorCode.InternalError, "Session store unavailable, retry shortly"),
        {
          id,
          headers: {
            "retry-after": "1",
          },
        },
      );
    }
  }

  /** Marks a failed store operation, so the request gets 503 rather than a 500. */
  async #stored<T>(operation: Promise<T>): Promise<T> {
    try {
      return await operation;
    } catch (error) {
      throw new StoreUnavailable(error);
    }
  }

  async #post(req: McpHttpRequest, message: Message, caller: Caller): Promise<McpHttpResponse> {
    const { auth } = caller;
    const id = requestIdOf(message);
    const headerVersion = req.header("mcp-protocol-version");
    if (headerVersion !== null && !LEGACY_VERSIONS.includes(headerVersion)) {
      return errorResponse(
        400,
        new McpError(
          ErrorCode.InvalidRequest,
          `Unsupported MCP-Protocol-Version: ${headerVersion}`,
        ),
        { id },
      );
    }
    const sessionId = req.header("mcp-session-id");
    if ("method" in message && message.method === "initialize") {
      if (sessionId !== null && !this.#options.stateless)
        return sessionError(400, "Session is already initialized", id);
      if (!isRequest(message as unknown as JsonObject))
        return sessionError(400, "initialize must be a request", id);
      return this.#initialize(
        message as JsonRpcRequest,
        principalKey(auth),
        this.#core.clientOf(req, auth),
      );
    }
    let record: SessionRecord | undefined;
    if (this.#options.stateless) {
      record = {
        id: "",
        protocolVersion: headerVersion ?? "2025-03-26",
        capabilities: {},
        subscriptions: [],
        principal: "",
        createdAt: 0,
      };
    } else {
      if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required", id);
      // Only requests make a session warm: notifications and replies read it without caching.
      record = await this.#session(
        sessionId,
        principalKey(auth),
        isRequest(message as unknown as JsonObject),
      );
      if (!record) return sessionError(404, "Session not found", id);
    }
    if (isResponse(message as unknown as JsonObject)) {
      const reply = message as JsonRpcResult | JsonRpcErrorResponse;
      return (await this.#routeReply(record.id, reply))
        ? { status: 202, headers: {}, body: null }
        : sessionError(404, `No server request is waiting for id ${String(reply.id)}`);
    }
    if (!("id" in message)) return this.#notification(record, message as JsonRpcNotification);
    const request = message as JsonRpcRequest;
    // A drain may have begun while the session was read: nothing new starts here now.
    if (this.#closing)
      return errorResponse(503, new McpError(ErrorCode.InternalError, "Server is shutting down"), {
        id: request.id,
        headers: {
          "retry-after": "1",
          connection: "close",
        },
      });
    if (SESSION_METHODS.has(request.method)) return this.#sessionMethod(record, request);
    const runtime = this.#runtime(record);
    return runLegacyRequest(
      this.#core,
      runtime,
      record,
      request,
      this.#options.retryMs,
      caller,
      () => this.#release(runtime),
    );
  }

  async #get(req: McpHttpRequest, auth: AuthInfo | undefined): Promise<McpHttpResponse> {
    if (this.#options.stateless) return methodNotAllowed();
    const accept = req.header("accept") ?? "";
    if (!/text\/event-stream|\*\/\*/.test(accept))
      return errorResponse(
        406,
        new McpError(ErrorCode.InvalidRequest, "Accept must include text/event-stream"),
      );
    const sessionId = req.header("mcp-session-id");
    if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required");
    const record = await this.#session(sessionId, principalKey(auth));
    if (!record) return sessionError(404, "Session not found");
    const runtime = this.#runtime(record);
    const lastEventId = req.header("last-event-id");
    const streamId = lastEventId === null ? undefined : streamOfEventId(lastEventId);
    const resumesPost = lastEventId !== null && streamId !== undefined && !streamId.startsWith("g");
    if (!resumesPost && runtime.standalone?.attached && lastEventId === null) {
      this.#release(runtime);
      return errorResponse(
        409,
        new McpError(ErrorCode.InvalidRequest, "The session already has a GET stream"),
      );
    }
    // The connection holds a slot until it closes, from either side.
    const client = this.#core.clientOf(req, auth);
    const slot = this.#core.slots.take(client);
    if (!granted(slot)) {
      this.#release(runtime);
      return slot;
    }
    const writer = new SseStream();
    writer.onClose(slot);
    const sse = { status: 200, headers: { ...SSE_HEADERS }, body: writer.readable };
    try {
      if (resumesPost) await this.#resumePost(runtime, streamId, lastEventId, writer);
      else await this.#openGet(runtime, record, streamId, lastEventId, writer, client);
    } catch (error) {
      // The slot, the stream and its timers go with the connection; the client gets a 503.
      writer.close();
      throw error instanceof StoreUnavailable ? error : new StoreUnavailable(error);
    }
    // A client that left while this was prepared: a host may never read, or cancel, the body.
    if (req.signal.aborted) writer.close();
    return sse;
  }

  /** Opens, or resumes (here or from another process), the session's GET stream on `writer`. */
  async #openGet(
    runtime: SessionRuntime,
    record: SessionRecord,
    streamId: string | undefined,
    lastEventId: string | null,
    writer: SseStream,
    client: string | undefined,
  ): Promise<void> {
    const local = runtime.standalone !== undefined && runtime.standalone.id === streamId;
    const standalone = runtime.openStandalone(streamId);
    this.#awaiting.stop(record.id);
    if (!this.#sinks.has(record.id)) this.#sinks.set(record.id, this.#core.hub.add(runtime.sink()));
    writer.onClose(() => this.#awaitResumption(runtime, standalone, client));
    if (lastEventId !== null) {
      // Held elsewhere, perhaps: that process lets go and logs what it sent before the replay;
      // what this one is asked to send meanwhile is numbered after it.
      await standalone.resume(
        writer,
        lastEventId,
        local
          ? undefined
          : async () => {
              const seq = await this.#takeOver(record.id, standalone);
              if (seq !== undefined) standalone.continueFrom(seq);
            },
      );
    } else {
      // Whichever process held this session's GET stream before lets go of it now.
      void this.#publish(record.id, { t: "take", stream: standalone.id, by: this.#processId });
      standalone.attach(writer);
      if (record.protocolVersion >= PRIMING_VERSION) standalone.prime(writer);
    }
  }

  /** The client left a GET stream: it waits for a resumption (see {@link AwaitingStreams}). */
  #awaitResumption(runtime: SessionRuntime, standalone: LegacyStream, client?: string): void {
    if (this.#closing || standalone.attached || standalone.ended) return;
    if (runtime.standalone !== standalone) return;
    this.#awaiting.add(runtime.sessionId, standalone, client);
  }

  /** Lets go of a GET stream whose client did not come back. */
  #forget(sessionId: string, standalone: LegacyStream): void {
    this.#awaiting.stop(sessionId);
    const runtime = this.#runtimes.get(sessionId);
    if (!runtime || runtime.standalone !== standalone || standalone.attached) return;
    runtime.standalone = undefined;
    this.#sinks.get(sessionId)?.();
    this.#sinks.delete(sessionId);
    this.#release(runtime);
  }

  /**
   * Resumes a POST response stream: replays its log, then goes on live, here if the request runs
   * here, or from the bus if it runs on another process. A foreign or unknown id replays nothing.
   */
  async #resumePost(
    runtime: SessionRuntime,
    streamId: string,
    lastEventId: string,
    writer: SseStream,
  ): Promise<void> {
    const live = runtime.streams.get(streamId);
    if (live) {
      await live.resume(writer, lastEventId);
      return;
    }
    await resumeElsewhere(
      {
        store: this.#store,
        checkMs: this.#options.resumeCheckMs,
        onError: (error) => this.#core.reportError(error),
        onClose: () => this.#release(runtime),
      },
      runtime.sessionId,
      streamId,
      lastEventId,
      writer,
    );
  }

  /** Answers a server request here, or through the bus on the process that sent it. */
  async #routeReply(
    sessionId: string,
    reply: JsonRpcResult | JsonRpcErrorResponse,
  ): Promise<boolean> {
    if (reply.id === undefined) return false;
    const local = this.#runtimes.get(sessionId);
    if (local?.answer(reply.id, reply)) return true;
    const message: SessionMessage = { t: "reply", id: String(reply.id) };
    // Too deep to relay (or to trust): the request that asked gets an error in its place.
    const tooDeep = paramsDepthError("result" in reply ? reply.result : reply.error);
    if (tooDeep) message.error = tooDeep.toJSON();
    else if ("result" in reply) message.result = reply.result;
    else message.error = reply.error;
    const receivers = await publish(this.#store.bus, Channels.session(sessionId), message);
    // This process hears its own message when it holds the session; that does not count.
    return receivers - (local?.listening ? 1 : 0) > 0;
  }

  /** Tells the other processes; resolves once Redis (or the memory bus) took the message. */
  #publish(sessionId: string, message: SessionMessage): Promise<void> {
    return publish(this.#store.bus, Channels.session(sessionId), message).then(
      () => undefined,
      (error: unknown) => this.#core.reportError(error),
    );
  }

  async #delete(req: McpHttpRequest, principal: string): Promise<McpHttpResponse> {
    if (this.#options.stateless) return methodNotAllowed();
    const sessionId = req.header("mcp-session-id");
    if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required");
    const record = await this.#session(sessionId, principal);
    if (!record || !(await this.#stored(this.#store.sessions.delete(sessionId))))
      return sessionError(404, "Session not found");
    await this.#cache.changed(sessionId).catch((error: unknown) => this.#core.reportError(error));
    this.#drop(sessionId, "Session deleted");
    void this.#publish(sessionId, { t: "end" });
    return { status: 200, headers: {}, body: null };
  }

  /**
   * The first step of a drain: every GET stream this process holds is offered to the other
   * processes (the one that takes it logs its events until the client resumes there with
   * `Last-Event-ID`, so nothing published meanwhile is lost), then its connection is closed with
   * a `retry:` hint. Requests in flight go on.
   */
  handOver(): Promise<void> {
    this.#handingOver ??= (async () => {
      this.#closing = true;
      clearInterval(this.#sweeper);
      this.#awaiting.clear();
      const runtimes = [...this.#runtimes.values()];
      await Promise.all(runtimes.map((runtime) => this.#handOver(runtime).catch(() => undefined)));
      for (const runtime of runtimes) {
        if (!runtime.standalone) continue;
        runtime.standalone.detach(this.#options.retryMs);
        runtime.standalone = undefined;
        this.#sinks.get(runtime.sessionId)?.();
        this.#sinks.delete(runtime.sessionId);
        this.#release(runtime);
      }
    })();
    return this.#handingOver;
  }

  /** Ends every session runtime of this process (shutdown); the sessions themselves live on. */
  async close(): Promise<void> {
    await this.handOver();
    for (const sessionId of [...this.#runtimes.keys()])
      this.#drop(sessionId, "Server is shutting down");
    await (await this.#handoffs.catch(() => async () => {}))();
    await this.#cache.close();
  }

  /** Offers a runtime's GET stream to the other processes; resolves once one took it. */
  async #handOver(runtime: SessionRuntime): Promise<void> {
    const standalone = runtime.standalone;
    if (!standalone || standalone.ended) return;
    const taken = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, HANDOFF_WAIT_MS);
      const previous = runtime.onRemote;
      runtime.onRemote = (message) => {
        previous(message);
        if (message.t === "take" && message.by !== this.#processId) {
          clearTimeout(timer);
          resolve();
        }
      };
    });
    const handoff: Handoff = {
      session: runtime.sessionId,
      stream: standalone.id,
      seq: standalone.seq,
      from: this.#processId,
    };
    // This process hears its own offer too.
    if ((await publish(this.#store.bus, Channels.handoff, handoff)) > 1) await taken;
  }

  /** Takes over a GET stream a process shutting down offered; one process wins the claim. */
  async #adopt(handoff: Handoff): Promise<void> {
    if (handoff.from === this.#processId || this.#closing) return;
    const key = `handoff:${handoff.session}/${handoff.stream}.${handoff.seq}`;
    if (!(await this.#store.nonces.claim(key, 60_000))) return;
    const record = await this.#stored(this.#store.sessions.get(handoff.session));
    if (!record) return;
    const runtime = this.#runtime(record);
    const standalone = runtime.openStandalone(handoff.stream);
    standalone.continueFrom(handoff.seq);
    await runtime.listen();
    // Changes from now on are kept, unnumbered, until the old holder has let go.
    standalone.hold();
    if (!this.#sinks.has(record.id)) this.#sinks.set(record.id, this.#core.hub.add(runtime.sink()));
    const seq = await this.#takeOver(record.id, standalone);
    // Events sent by the old holder after its offer are in the log: go on after them.
    if (seq !== undefined) standalone.continueFrom(seq);
    standalone.release();
    this.#awaitResumption(runtime, standalone);
  }

  /**
   * Asks whichever process holds a GET stream to let go of it, and waits (briefly: there may be
   * none) until it says every event it sent is logged. Resolves with its last event's counter.
   */
  async #takeOver(sessionId: string, standalone: LegacyStream): Promise<number | undefined> {
    const released = new Promise<number | undefined>((resolve) => {
      const timer = setTimeout(() => done(undefined), TAKEOVER_WAIT_MS);
      const done = (seq: number | undefined) => {
        clearTimeout(timer);
        if (this.#released.get(standalone.id) === done) this.#released.delete(standalone.id);
        resolve(seq);
      };
      this.#released.set(standalone.id, done);
    });
    await this.#runtimes.get(sessionId)?.listen();
    const message: SessionMessage = { t: "take", stream: standalone.id, by: this.#processId };
    const receivers = await publish(this.#store.bus, Channels.session(sessionId), message).catch(
      (error: unknown) => {
        this.#core.reportError(error);
        return 0;
      },
    );
    // This process hears its own message; nobody else listening means nobody holds the stream.
    if (receivers <= 1) this.#released.get(standalone.id)?.(undefined);
    return released;
  }

  /** Tells every process (this one too) to read a changed session record again. */
  async #announce(sessionId: string): Promise<void> {
    if (this.#options.stateless) return;
    await this.#stored(this.#cache.changed(sessionId));
  }

  /** The session a request names, when it belongs to the request's principal. */
  async #session(
    sessionId: string,
    principal: string,
    keep = true,
  ): Promise<SessionRecord | undefined> {
    const record = await this.#stored(this.#cache.get(sessionId, keep));
    // Another principal presenting the id gets the same answer as an unknown session (§5).
    if (record?.principal !== principal) return undefined;
    return record;
  }

  #runtime(record: SessionRecord): SessionRuntime {
    let runtime = this.#runtimes.get(record.id);
    if (!runtime) {
      runtime = new SessionRuntime(record.id, record.subscriptions, {
        log: this.#store.events,
        bus: this.#store.bus,
        processId: this.#processId,
        requestTimeoutMs: this.#options.requestTimeoutMs,
        onError: (error) => this.#core.reportError(error),
      });
      const held = runtime;
      held.onRemote = (message) => {
        if (message.t === "end") this.#drop(held.sessionId, "Session deleted");
        else if (message.t === "released" && message.by !== this.#processId)
          this.#released.get(message.stream)?.(message.seq);
        else if (message.t === "take" && message.by !== this.#processId && held.standalone) {
          const standalone = held.standalone;
          this.#awaiting.stop(held.sessionId);
          standalone.detach(this.#options.retryMs);
          held.standalone = undefined;
          this.#sinks.get(held.sessionId)?.();
          this.#sinks.delete(held.sessionId);
          this.#release(held);
          // The taker reads the log next: tell it once every event this process sent is there.
          void standalone.flushed().then(() =>
            this.#publish(held.sessionId, {
              t: "released",
              stream: standalone.id,
              seq: standalone.seq,
              by: this.#processId,
            }),
          );
        }
      };
      this.#runtimes.set(record.id, runtime);
    }
    return runtime;
  }

  /**
   * Drops GET streams whose client left and whose session has since expired: a runtime kept for a
   * resumption that can no longer come. Other runtimes end with their requests.
   */
  async #sweep(): Promise<void> {
    for (const runtime of [...this.#runtimes.values()]) {
      const waiting = runtime.standalone && !runtime.standalone.attached;
      if (!waiting || runtime.pending.size + runtime.inflight.size + runtime.streams.size > 0)
        continue;
      try {
        if (!(await this.#store.sessions.exists(runtime.sessionId)))
          this.#drop(runtime.sessionId, "Session expired");
      } catch (error) {
        this.#core.reportError(error);
      }
    }
  }

  #release(runtime: SessionRuntime): void {
    if (!runtime.idle || this.#runtimes.get(runtime.sessionId) !== runtime) return;
    this.#runtimes.delete(runtime.sessionId);
    runtime.close("released");
  }

  #drop(sessionId: string, reason: string): void {
    this.#awaiting.stop(sessionId);
    this.#runtimes.get(sessionId)?.close(reason);
    this.#runtimes.delete(sessionId);
    this.#sinks.get(sessionId)?.();
    this.#sinks.delete(sessionId);
  }

  async #initialize(
    request: JsonRpcRequest,
    principal: string,
    client: string | undefined,
  ): Promise<McpHttpResponse> {
    const params = request.params ?? {};
    const invalid = initializeParamsError(params);
    if (invalid) return errorResponse(400, invalid, { id: request.id });
    const protocolVersion = negotiateVersion(params.protocolVersion);
    const result = initializeResult(this.#core.server, protocolVersion);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (!this.#options.stateless) {
      const record: SessionRecord = {
        id: newSessionId(),
        protocolVersion,
        capabilities: isObject(params.capabilities) ? params.capabilities : {},
        subscriptions: [],
        principal,
        createdAt: Date.now(),
      };
      if (isObject(params.clientInfo)) record.clientInfo = params.clientInfo;
      const evicted = await this.#stored(
        this.#store.sessions.create(record, this.#options.maxSessions),
      );
      if (evicted.length > 0) await this.#stored(this.#cache.changed(...evicted));
      if (client !== undefined) await this.#limitSessionsOf(client, record.id);
      headers["mcp-session-id"] = record.id;
    }
    this.#core.observe({
      era: "legacy",
      method: "initialize",
      params,
      started: performance.now(),
      status: 200,
    });
    return {
      status: 200,
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: request.id, result }),
    };
  }

  /** Ends a client's own oldest sessions beyond `maxSessionsPerClient` (see {@link SessionQuota}). */
  async #limitSessionsOf(client: string, sessionId: string): Promise<void> {
    for (const oldest of this.#quota.add(client, sessionId)) {
      if (!(await this.#stored(this.#store.sessions.delete(oldest)))) continue;
      await this.#stored(this.#cache.changed(oldest));
      this.#drop(oldest, "Session ended: too many sessions for this client");
      void this.#publish(oldest, { t: "end" });
    }
  }

  #notification(record: SessionRecord, message: JsonRpcNotification): McpHttpResponse {
    if (message.method === "notifications/cancelled") {
      const requestId = message.params?.requestId;
      const local = this.#runtimes.get(record.id)?.inflight.get(String(requestId));
      if (local) local.abort(new Error("Cancelled by the client"));
      else if (requestId !== undefined)
        void this.#publish(record.id, { t: "cancel", requestId: String(requestId) });
    }
    return { status: 202, headers: {}, body: null };
  }

  async #sessionMethod(record: SessionRecord, request: JsonRpcRequest): Promise<McpHttpResponse> {
    const params = request.params ?? {};
    const ok = () => ({
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: request.id, result: {} }),
    });
    if (request.method === "ping") return ok();
    if (request.method === "logging/setLevel") {
      if (!isLogLevel(params.level))
        return errorResponse(
          200,
          new McpError(ErrorCode.InvalidParams, `Unknown log level: ${String(params.level)}`),
          { id: request.id },
        );
      record.logLevel = params.level;
      if (!this.#options.stateless)
        await this.#stored(this.#store.sessions.update(record.id, { logLevel: params.level }));
      await this.#announce(record.id);
      return ok();
    }
    if (typeof params.uri !== "string")
      return errorResponse(200, new McpError(ErrorCode.InvalidParams, "uri must be a string"), {
        id: request.id,
      });
    const subscriptions = new Set(record.subscriptions);
    if (request.method === "resources/subscribe") subscriptions.add(params.uri);
    else subscriptions.delete(params.uri);
    record.subscriptions = [...subscriptions];
    if (!this.#options.stateless) {
      await this.#stored(
        this.#store.sessions.update(record.id, { subscriptions: record.subscriptions }),
      );
      const runtime = this.#runtimes.get(record.id);
      if (runtime) runtime.subscriptions = subscriptions;
      // The process holding the GET stream may be another one: tell it before acknowledging.
      await this.#publish(record.id, { t: "subs", uris: record.subscriptions });
      await this.#announce(record.id);
    }
    return ok();
  }
}
