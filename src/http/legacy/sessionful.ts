import { ErrorCode, McpError } from "../../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResult,
} from "../../protocol/messages.js";
import { principalKey } from "../../server/access.js";
import { isSessionMethod, type SessionMethod } from "../../server/session-methods.js";
import type { AuthInfo } from "../../server/types.js";
import type { McpStore, SessionRecord } from "../../store/types.js";
import type { LazyAbort } from "../../utils/lazy-abort.js";
import { isThenable } from "../../utils/thenable.js";
import type { Caller } from "../caller.js";
import type { EndpointServices } from "../endpoint-services.js";
import { errorResponse } from "../responses.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import { serveGet } from "./get-stream.js";
import { StreamHandoffs } from "./handoff.js";
import type { HeldSession } from "./held-session.js";
import {
  answerInitialize,
  isAnswer,
  type LegacyMessage,
  requestIdOf,
  sessionError,
  shuttingDown,
  sortMessage,
  tooManySessions,
  versionHeaderError,
} from "./incoming.js";
import { type RequestHost, runLegacyRequest } from "./run.js";
import { answerOverHttp } from "./session-methods.js";
import { SessionQuota } from "./session-quota.js";
import { peerOf } from "./session-record.js";
import { Sessions } from "./sessions.js";
import { answer503OnStoreOutage, fromStore, storeOutage } from "./store-outage.js";
import type { LegacyStream } from "./stream.js";
import type { LegacyEra, LegacySettings } from "./types.js";

/**
 * The legacy era with sessions (PROTOCOL §3): `initialize` opens one, named by `Mcp-Session-Id`
 * on every later request; a session has a GET stream for server messages, resumable streams and
 * server requests, and ends on DELETE or when idle. Every process sharing the store serves every
 * session.
 */
export class SessionfulLegacy implements LegacyEra {
  readonly stateless = false;
  readonly #core: EndpointServices;
  readonly #settings: LegacySettings;
  readonly #sessions: Sessions;
  readonly #handoffs: StreamHandoffs;
  /** Each client's cap of sessions (`maxSessionsPerClient`), counted in the store. */
  readonly #quota: SessionQuota;
  readonly #store: McpStore;
  readonly #sweeper: ReturnType<typeof setInterval>;
  #handingOver: Promise<void> | undefined;

  constructor(core: EndpointServices, store: McpStore, settings: LegacySettings) {
    this.#core = core;
    this.#store = store;
    this.#settings = settings;
    this.#sessions = new Sessions(core, store, settings, (held, event) =>
      this.#handoffs.onRemote(held, event),
    );
    this.#handoffs = new StreamHandoffs(core, store, this.#sessions, settings.retryMs);
    this.#quota = new SessionQuota({
      sessions: store.sessions,
      max: settings.maxSessionsPerClient,
      presence: this.#sessions.presence,
      end: (id) => this.#sessions.end(id, "Session ended: too many sessions for this client"),
    });
    this.#sweeper = setInterval(() => void this.#sessions.sweep(), settings.sweepIntervalMs);
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  get sessionsHeld(): number {
    return this.#sessions.heldCount;
  }

  /**
   * Serves a POST. A warm request takes at most one async step, its session's read (none on the
   * memory store once this process is present): what runs after it answers at once when the
   * handler does.
   */
  async post(
    req: McpHttpRequest,
    message: LegacyMessage,
    caller: Caller = {},
  ): Promise<McpHttpResponse> {
    const id = requestIdOf(message);
    try {
      const wrongVersion = versionHeaderError(req, id);
      if (wrongVersion) return wrongVersion;
      const sessionId = req.header("mcp-session-id");
      const sorted = sortMessage(message);
      if (isAnswer(sorted)) return sorted;
      if (sorted.kind === "initialize")
        return await this.#initialize(req, sorted.request, sessionId, caller.auth);
      if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required", id);
      // Only requests make a session warm: notifications and replies read it without caching.
      // A request that runs here holds the session, marked active from this very read.
      const keep = sorted.kind === "request";
      const holds = keep && !isSessionMethod(sorted.request.method) && !this.#sessions.draining;
      const client = this.#core.clientOf(req, caller.auth);
      const found = { keep, client, holds };
      const finding = this.#sessions.find(sessionId, principalKey(caller.auth), found);
      const record = isThenable(finding) ? await finding : finding;
      if (!record) return sessionError(404, "Session not found", id);
      switch (sorted.kind) {
        case "reply":
          return await this.#reply(record, sorted.reply);
        case "notification":
          return this.#notification(record, sorted.notification);
        case "request": {
          const answered = this.#request(record, sorted.request, caller, holds, client);
          return isThenable(answered) ? await answered : answered;
        }
      }
    } catch (error) {
      return storeOutage(error, this.#report, id);
    }
  }

  get(req: McpHttpRequest, auth?: AuthInfo): Promise<McpHttpResponse> {
    return answer503OnStoreOutage(() => this.#get(req, auth), this.#report);
  }

  delete(req: McpHttpRequest, auth?: AuthInfo): Promise<McpHttpResponse> {
    return answer503OnStoreOutage(() => this.#delete(req, auth), this.#report);
  }

  /**
   * The first step of a drain: every GET stream this process holds is offered to the other
   * processes (the one that takes it logs its events until the client resumes there with
   * `Last-Event-ID`, so nothing published meanwhile is lost), then its connection is closed with
   * a `retry:` hint. Requests in flight go on.
   */
  handOver(): Promise<void> {
    this.#handingOver ??= (async () => {
      this.#sessions.startDraining();
      clearInterval(this.#sweeper);
      await this.#handoffs.offerAll();
    })();
    return this.#handingOver;
  }

  async close(): Promise<void> {
    await this.handOver();
    await this.#sessions.close("Server is shutting down");
    await this.#handoffs.close();
  }

  readonly #report = (error: unknown) => this.#core.reportError(error);

  async #initialize(
    req: McpHttpRequest,
    request: JsonRpcRequest,
    sessionId: string | null,
    auth: AuthInfo | undefined,
  ): Promise<McpHttpResponse> {
    if (sessionId !== null) return sessionError(400, "Session is already initialized", request.id);
    const client = this.#core.clientOf(req, auth);
    if (client !== undefined && !(await fromStore(this.#quota.makeRoom(client))))
      return tooManySessions(request.id);
    return answerInitialize(this.#core, request, (params, version) =>
      this.#sessions.open(params, version, principalKey(auth), client),
    );
  }

  async #reply(
    record: SessionRecord,
    reply: JsonRpcResult | JsonRpcErrorResponse,
  ): Promise<McpHttpResponse> {
    return (await this.#sessions.routeReply(record.id, reply))
      ? { status: 202, headers: {}, body: null }
      : sessionError(404, `No server request is waiting for id ${String(reply.id)}`);
  }

  #request(
    record: SessionRecord,
    request: JsonRpcRequest,
    caller: Caller,
    holds: boolean,
    client: string | undefined,
  ): McpHttpResponse | Promise<McpHttpResponse> {
    // A drain may have begun while the session was read: nothing new starts here now (and the
    // read's mark on the session goes).
    if (this.#sessions.draining) {
      if (holds) this.#sessions.release(this.#sessions.hold(record));
      return shuttingDown(request.id);
    }
    if (isSessionMethod(request.method))
      return this.#sessionMethod(record, request.method, request);
    const held = this.#sessions.hold(record);
    return runLegacyRequest(this.#core, {
      request,
      peer: peerOf(record),
      host: this.#hostIn(held),
      caller,
      client,
      retryMs: this.#settings.retryMs,
    });
  }

  async #sessionMethod(
    record: SessionRecord,
    method: SessionMethod,
    request: JsonRpcRequest,
  ): Promise<McpHttpResponse> {
    const { response, change } = answerOverHttp(method, request, record);
    if (change) await this.#sessions.update(record.id, change);
    return response;
  }

  /** Where a request of a held session runs: its streams, cancellation and server requests. */
  #hostIn(held: HeldSession): RequestHost {
    return new HeldHost(held, this.#sessions);
  }

  #notification(record: SessionRecord, message: JsonRpcNotification): McpHttpResponse {
    const requestId = message.params?.requestId;
    if (message.method === "notifications/cancelled" && requestId !== undefined)
      this.#sessions.cancel(record.id, String(requestId));
    return { status: 202, headers: {}, body: null };
  }

  async #get(req: McpHttpRequest, auth: AuthInfo | undefined): Promise<McpHttpResponse> {
    const accept = req.header("accept") ?? "";
    if (!/text\/event-stream|\*\/\*/.test(accept))
      return errorResponse(
        406,
        new McpError(ErrorCode.InvalidRequest, "Accept must include text/event-stream"),
      );
    const sessionId = req.header("mcp-session-id");
    if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required");
    // serveGet holds the session: marked active from this very read.
    const record = await this.#sessions.find(sessionId, principalKey(auth), {
      client: this.#core.clientOf(req, auth),
      holds: true,
    });
    if (!record) return sessionError(404, "Session not found");
    const context = {
      core: this.#core,
      store: this.#store,
      sessions: this.#sessions,
      handoffs: this.#handoffs,
      resumeCheckMs: this.#settings.resumeCheckMs,
    };
    return serveGet(context, req, record, auth);
  }

  async #delete(req: McpHttpRequest, auth: AuthInfo | undefined): Promise<McpHttpResponse> {
    const sessionId = req.header("mcp-session-id");
    if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required");
    const record = await this.#sessions.find(sessionId, principalKey(auth));
    if (!record || !(await this.#sessions.end(sessionId, "Session deleted")))
      return sessionError(404, "Session not found");
    this.#core.dispatchServices.telemetry?.sessionEnded(
      record.createdAt,
      record.protocolVersion,
      "tcp",
    );
    return { status: 200, headers: {}, body: null };
  }
}

/** A request's host in a held session, let go of once the request is done. */
class HeldHost implements RequestHost {
  readonly #held: HeldSession;
  readonly #sessions: Sessions;

  constructor(held: HeldSession, sessions: Sessions) {
    this.#held = held;
    this.#sessions = sessions;
  }

  openStream(requestId: JsonRpcRequest["id"]): LegacyStream {
    return this.#held.openStream(requestId);
  }

  finishStream(stream: LegacyStream): void {
    this.#held.finishStream(stream);
  }

  track(requestId: string, abort: LazyAbort): () => void {
    return this.#held.track(requestId, abort);
  }

  request(...args: Parameters<HeldSession["request"]>): Promise<JsonObject> {
    return this.#held.request(...args);
  }

  done(): void {
    this.#sessions.release(this.#held);
  }
}
