import { ErrorCode, isMcpError, McpError } from "../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResult,
} from "../protocol/messages.js";
import { isObject, isRequest, isResponse } from "../protocol/messages.js";
import { isLogLevel, LEGACY_VERSIONS, type LogLevel } from "../protocol/versions.js";
import type { RequestEnv } from "../server/context.js";
import { dispatch } from "../server/dispatch.js";
import type { Implementation } from "../server/types.js";
import type { SessionRecord, McpStore } from "../store/types.js";
import { toBase64Url } from "../utils/base64.js";
import type { HandlerCore } from "./core.js";
import { LegacyStream, streamOfEventId } from "./legacy-stream.js";
import { SessionRuntime } from "./legacy-session.js";
import { errorMessage, errorResponse, methodNotAllowed } from "./responses.js";
import { SSE_HEADERS, SseStream } from "./sse.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";

/** Options of the legacy era (protocol 2025-03-26 to 2025-11-25). */
export interface LegacyOptions {
  /** Serve legacy clients with no session at all, for serverless hosts. @default false */
  stateless?: boolean;
  /** Most live sessions; the longest idle are evicted beyond it. @default 50_000 */
  maxSessions?: number;
  /** Longest wait for a client's answer to a server request. @default 300_000 */
  requestTimeoutMs?: number;
  /** `retry:` hint, in ms, when the server closes a stream early (2025-11-25 polling). @default 1_000 */
  retryMs?: number;
}

/** The first version whose SSE streams start with a priming event. */
const PRIMING_VERSION = "2025-11-25";
const SESSION_METHODS = new Set([
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

type Message = JsonRpcRequest | JsonRpcNotification | JsonRpcResult | JsonRpcErrorResponse;

function newSessionId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
}

function sessionError(
  status: 400 | 404,
  message: string,
  id?: JsonRpcRequest["id"],
): McpHttpResponse {
  return errorResponse(status, ErrorCode.InvalidRequest, message, id);
}

/** Serves legacy clients on the same endpoint as modern ones (PROTOCOL §3). */
export class LegacyEra {
  readonly #core: HandlerCore;
  readonly #store: McpStore;
  readonly #options: Required<LegacyOptions>;
  readonly #runtimes = new Map<string, SessionRuntime>();
  readonly #sinks = new Map<string, () => void>();

  constructor(core: HandlerCore, store: McpStore, options: LegacyOptions) {
    this.#core = core;
    this.#store = store;
    this.#options = {
      stateless: options.stateless ?? false,
      maxSessions: options.maxSessions ?? 50_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 300_000,
      retryMs: options.retryMs ?? 1_000,
    };
  }

  /** True when legacy clients are served without sessions. */
  get stateless(): boolean {
    return this.#options.stateless;
  }

  /** Serves a POST: `initialize`, or a message of an existing session. */
  async post(req: McpHttpRequest, message: Message): Promise<McpHttpResponse> {
    const id =
      "id" in message && !isResponse(message as unknown as JsonObject)
        ? (message as JsonRpcRequest).id
        : undefined;
    const headerVersion = req.header("mcp-protocol-version");
    if (headerVersion !== null && !LEGACY_VERSIONS.includes(headerVersion)) {
      return errorResponse(
        400,
        ErrorCode.InvalidRequest,
        `Unsupported MCP-Protocol-Version: ${headerVersion}`,
        id,
      );
    }
    const sessionId = req.header("mcp-session-id");
    if ("method" in message && message.method === "initialize") {
      if (sessionId !== null && !this.#options.stateless)
        return sessionError(400, "Session is already initialized", id);
      if (!isRequest(message as unknown as JsonObject))
        return sessionError(400, "initialize must be a request", id);
      return this.#initialize(message as JsonRpcRequest);
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
      record = await this.#session(sessionId);
      if (!record) return sessionError(404, "Session not found", id);
    }
    if (isResponse(message as unknown as JsonObject)) {
      const reply = message as JsonRpcResult | JsonRpcErrorResponse;
      const known =
        reply.id !== undefined && this.#runtimes.get(record.id)?.answer(reply.id, reply);
      return known
        ? { status: 202, headers: {}, body: null }
        : sessionError(404, `No server request is waiting for id ${String(reply.id)}`);
    }
    if (!("id" in message)) return this.#notification(record, message as JsonRpcNotification);
    const request = message as JsonRpcRequest;
    if (SESSION_METHODS.has(request.method)) return this.#sessionMethod(record, request);
    return this.#run(record, request);
  }

  /** Serves a GET: the session's standalone stream, or the resumption of any of its streams. */
  async get(req: McpHttpRequest): Promise<McpHttpResponse> {
    if (this.#options.stateless) return methodNotAllowed();
    const accept = req.header("accept") ?? "";
    if (!/text\/event-stream|\*\/\*/.test(accept))
      return errorResponse(406, ErrorCode.InvalidRequest, "Accept must include text/event-stream");
    const sessionId = req.header("mcp-session-id");
    if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required");
    const record = await this.#session(sessionId);
    if (!record) return sessionError(404, "Session not found");
    const runtime = this.#runtime(record);
    const writer = new SseStream();
    const lastEventId = req.header("last-event-id");
    const streamId = lastEventId === null ? undefined : streamOfEventId(lastEventId);
    if (lastEventId !== null && streamId !== undefined && streamId !== runtime.standalone?.id) {
      // Resumption of a POST response stream; a foreign or unknown id replays nothing.
      const live = runtime.streams.get(streamId);
      const stream =
        live ??
        new LegacyStream({
          sessionId: record.id,
          id: streamId,
          log: this.#store.events,
          onError: (e) => this.#core.reportError(e),
        });
      await stream.resume(writer, lastEventId);
      if (!live) writer.close();
      return { status: 200, headers: { ...SSE_HEADERS }, body: writer.readable };
    }
    if (runtime.standalone?.attached && lastEventId === null) {
      return errorResponse(409, ErrorCode.InvalidRequest, "The session already has a GET stream");
    }
    const standalone = runtime.openStandalone();
    if (!this.#sinks.has(record.id)) this.#sinks.set(record.id, this.#core.hub.add(runtime.sink()));
    if (lastEventId !== null) await standalone.resume(writer, lastEventId);
    else {
      standalone.attach(writer);
      if (record.protocolVersion >= PRIMING_VERSION) standalone.prime(writer);
    }
    return { status: 200, headers: { ...SSE_HEADERS }, body: writer.readable };
  }

  /** Serves a DELETE: ends the session and its streams. */
  async delete(req: McpHttpRequest): Promise<McpHttpResponse> {
    if (this.#options.stateless) return methodNotAllowed();
    const sessionId = req.header("mcp-session-id");
    if (sessionId === null) return sessionError(400, "Mcp-Session-Id header is required");
    const record = await this.#session(sessionId);
    if (!record || !(await this.#store.sessions.delete(sessionId)))
      return sessionError(404, "Session not found");
    this.#drop(sessionId, "Session deleted");
    return { status: 200, headers: {}, body: null };
  }

  /** Ends every session runtime of this process (shutdown); the sessions themselves live on. */
  close(): void {
    for (const sessionId of [...this.#runtimes.keys()])
      this.#drop(sessionId, "Server is shutting down");
  }

  async #session(sessionId: string): Promise<SessionRecord | undefined> {
    const record = await this.#store.sessions.get(sessionId);
    // Another principal presenting the id gets the same answer as an unknown session.
    if (record?.principal !== "") return undefined;
    return record;
  }

  #runtime(record: SessionRecord): SessionRuntime {
    let runtime = this.#runtimes.get(record.id);
    if (!runtime) {
      runtime = new SessionRuntime(record.id, record.subscriptions, {
        log: this.#store.events,
        requestTimeoutMs: this.#options.requestTimeoutMs,
        onError: (error) => this.#core.reportError(error),
      });
      this.#runtimes.set(record.id, runtime);
    }
    return runtime;
  }

  #release(runtime: SessionRuntime): void {
    if (runtime.idle) this.#runtimes.delete(runtime.sessionId);
  }

  #drop(sessionId: string, reason: string): void {
    this.#runtimes.get(sessionId)?.close(reason);
    this.#runtimes.delete(sessionId);
    this.#sinks.get(sessionId)?.();
    this.#sinks.delete(sessionId);
  }

  async #initialize(request: JsonRpcRequest): Promise<McpHttpResponse> {
    const params = request.params ?? {};
    const requested = params.protocolVersion;
    const protocolVersion =
      typeof requested === "string" && LEGACY_VERSIONS.includes(requested)
        ? requested
        : LEGACY_VERSIONS[0]!;
    const server = this.#core.server;
    const result: JsonObject = {
      protocolVersion,
      capabilities: server.capabilities(),
      serverInfo: server.info,
    };
    if (server.instructions !== undefined) result.instructions = server.instructions;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (!this.#options.stateless) {
      const record: SessionRecord = {
        id: newSessionId(),
        protocolVersion,
        capabilities: isObject(params.capabilities) ? params.capabilities : {},
        subscriptions: [],
        principal: "",
        createdAt: Date.now(),
      };
      if (isObject(params.clientInfo)) record.clientInfo = params.clientInfo;
      await this.#store.sessions.create(record, this.#options.maxSessions);
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

  #notification(record: SessionRecord, message: JsonRpcNotification): McpHttpResponse {
    if (message.method === "notifications/cancelled") {
      const requestId = message.params?.requestId;
      if (requestId !== undefined)
        this.#runtimes
          .get(record.id)
          ?.inflight.get(String(requestId))
          ?.abort(new Error("Cancelled by the client"));
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
          ErrorCode.InvalidParams,
          `Unknown log level: ${String(params.level)}`,
          request.id,
        );
      record.logLevel = params.level;
      if (!this.#options.stateless)
        await this.#store.sessions.update(record.id, { logLevel: params.level });
      return ok();
    }
    if (typeof params.uri !== "string")
      return errorResponse(200, ErrorCode.InvalidParams, "uri must be a string", request.id);
    const subscriptions = new Set(record.subscriptions);
    if (request.method === "resources/subscribe") subscriptions.add(params.uri);
    else subscriptions.delete(params.uri);
    record.subscriptions = [...subscriptions];
    if (!this.#options.stateless) {
      await this.#store.sessions.update(record.id, { subscriptions: record.subscriptions });
      const runtime = this.#runtimes.get(record.id);
      if (runtime) runtime.subscriptions = subscriptions;
    }
    return ok();
  }

  /**
   * Runs a request. JSON unless the handler sends something first; then an SSE stream that
   * carries its notifications and server requests, each event logged for resumption.
   */
  #run(record: SessionRecord, request: JsonRpcRequest): Promise<McpHttpResponse> {
    const started = performance.now();
    const runtime = this.#runtime(record);
    // Disconnecting is not cancellation in this era; notifications/cancelled and DELETE are.
    const abort = new LazyAbort();
    const key = String(request.id);
    runtime.inflight.set(key, abort);
    const params = request.params ?? {};
    return new Promise<McpHttpResponse>((resolve) => {
      let stream: LegacyStream | undefined;
      const open = (): LegacyStream => {
        if (stream) return stream;
        stream = runtime.openStream();
        const writer = new SseStream();
        stream.attach(writer);
        if (record.protocolVersion >= PRIMING_VERSION) stream.prime(writer);
        resolve({ status: 200, headers: { ...SSE_HEADERS }, body: writer.readable });
        return stream;
      };
      const env: RequestEnv = {
        era: "legacy",
        protocolVersion: record.protocolVersion,
        clientCapabilities: record.capabilities,
        clientInfo: record.clientInfo as Implementation | undefined,
        logLevel: (record.logLevel as LogLevel | undefined) ?? "debug",
        abort,
        sessionId: record.id || undefined,
        send: (notification) => {
          if (!abort.aborted) open().send(notification);
        },
        request: (method, requestParams, signal) =>
          runtime.request(open(), method, requestParams, signal),
        closeStream:
          record.protocolVersion >= PRIMING_VERSION
            ? () => open().detach(this.#options.retryMs)
            : undefined,
        onError: (error) => this.#core.reportError(error, request.method),
      };
      const finish = (status: number, body: JsonObject, error?: unknown) => {
        runtime.inflight.delete(key);
        this.#core.observe({
          era: "legacy",
          method: request.method,
          params,
          started,
          client: env.clientInfo,
          status,
          error,
        });
        if (stream) {
          stream.send(body as never);
          stream.end();
          runtime.streams.delete(stream.id);
        } else {
          resolve({
            status,
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          });
        }
        this.#release(runtime);
      };
      dispatch(
        this.#core.server,
        this.#core.runtime,
        { id: request.id, method: request.method, params },
        env,
      ).then(
        (result) => finish(200, { jsonrpc: "2.0", id: request.id, result }),
        (error: unknown) => {
          const known = isMcpError(error)
            ? error
            : new McpError(ErrorCode.InternalError, "Internal error");
          if (!isMcpError(error)) this.#core.reportError(error, request.method);
          // JSON-RPC errors travel as 200 in this era, so clients read them as errors, not transport failures.
          finish(200, errorMessage(known, request.id), known);
        },
      );
    });
  }
}
