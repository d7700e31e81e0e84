import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { ErrorCode, invalidParams, isMcpError, McpError } from "../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcMessage,
  JsonRpcRequest,
  RequestId,
} from "../protocol/messages.js";
import { isNotification, isObject, isRequest, isResponse } from "../protocol/messages.js";
import { answerDepthError, paramsDepthError } from "../protocol/params.js";
import { LEGACY_VERSIONS, type LogLevel } from "../protocol/versions.js";
import type { RequestEnv } from "../server/context.js";
import { type DispatchRuntime, dispatch, hasMethod } from "../server/dispatch.js";
import { initializeParamsError, initializeResult, negotiateVersion } from "../server/initialize.js";
import {
  type ListenFilter,
  ListenHub,
  listenSink,
  parseListenFilter,
} from "../server/listen-hub.js";
import type { McpServer } from "../server/mcp-server.js";
import { isModernRequest, readModernMeta, unsupportedVersion } from "../server/modern-meta.js";
import { createStateSealer } from "../server/request-state.js";
import { answerSessionMethod, isSessionMethod } from "../server/session-methods.js";
import type { Implementation } from "../server/types.js";
import { memoryStore } from "../store/memory.js";
import type { McpStore } from "../store/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";

const STDIO_VERSIONS = [...LEGACY_VERSIONS, "2024-11-05"];
/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** @default process.stdin */
  input?: Readable;
  /** @default process.stdout */
  output?: Writable;
  /** Key material for sealing `requestState`. @default a random per-process key */
  secret?: string | Uint8Array;
  /** @default memoryStore() */
  store?: McpStore;
  /** Reports errors; logs go to stderr, never stdout. @default console.error */
  onError?: (error: unknown) => void;
}

/** A running stdio server. */
export interface StdioServer {
  /** Resolves once stdin ends and everything is shut down. */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

/** The one legacy session a stdio process holds after `initialize`. */
interface StdioSession {
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation;
  logLevel?: LogLevel;
  subscriptions: Set<string>;
}

/**
 * Serves `server` over newline-delimited JSON-RPC on stdin/stdout (PROTOCOL §4), in both eras:
 * modern requests carry `_meta`; `initialize` opens a legacy session for the process.
 */
export function serveStdio(server: McpServer, options: StdioOptions = {}): StdioServer {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const store = options.store ?? memoryStore();
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const runtime: DispatchRuntime = {
    sealer: createStateSealer(options.secret),
    nonces: store.nonces,
    stateTtlMs: 300_000,
    singleUseState: false,
  };
  const hub = new ListenHub(server, {
    bus: store.bus,
    keepAliveMs: 0,
    onError,
  });
  const inflight = new Map<string, LazyAbort>();
  /** Set while stdin has ended and running requests are waited for. */
  let settled: (() => void) | undefined;
  const listens = new Map<string, () => void>();
  const pending = new Map<
    string,
    { resolve(result: JsonObject): void; reject(error: unknown): void }
  >();
  let session: StdioSession | undefined;
  let nextServerRequest = 0;
  let closed = false;

  const write = (message: JsonRpcMessage): undefined => {
    if (!closed) output.write(`${JSON.stringify(message)}\n`);
    return undefined;
  };
  const fail = (id: RequestId | undefined, error: McpError): undefined =>
    write(
      id === undefined
        ? { jsonrpc: "2.0", error: error.toJSON() }
        : { jsonrpc: "2.0", id, error: error.toJSON() },
    );

  function serverRequest(
    method: string,
    params: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const id = `s${++nextServerRequest}`;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        pending.delete(id);
        reject(new Error(`${method} was cancelled`));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      pending.set(id, {
        resolve: (result) => {
          signal.removeEventListener("abort", onAbort);
          const tooDeep = answerDepthError(method, result);
          if (tooDeep) reject(tooDeep);
          else resolve(result);
        },
        reject,
      });
      write({ jsonrpc: "2.0", id, method, params });
      // Once stdin has ended, nobody can answer: stop waiting for running requests.
      settled?.();
    });
  }

  async function run(
    request: JsonRpcRequest,
    env: Omit<RequestEnv, "abort" | "send">,
  ): Promise<void> {
    const key = String(request.id);
    const abort = new LazyAbort();
    inflight.set(key, abort);
    const full: RequestEnv = {
      ...env,
      abort,
      send: (notification) => (abort.aborted ? undefined : write(notification)),
    };
    try {
      const result = await dispatch(
        server,
        runtime,
        { id: request.id, method: request.method, params: request.params ?? {} },
        full,
      );
      // A cancelled request gets no response (spec: patterns/cancellation).
      if (!abort.aborted) write({ jsonrpc: "2.0", id: request.id, result });
    } catch (error) {
      if (!isMcpError(error)) onError(error);
      if (!abort.aborted)
        fail(
          request.id,
          isMcpError(error) ? error : new McpError(ErrorCode.InternalError, "Internal error"),
        );
    } finally {
      inflight.delete(key);
      if (inflight.size === 0) settled?.();
    }
  }

  function modern(request: JsonRpcRequest): undefined {
    const params = request.params ?? {};
    let meta: ReturnType<typeof readModernMeta>;
    let filter: ListenFilter | undefined;
    try {
      meta = readModernMeta(params);
      const unsupported = unsupportedVersion(meta.version);
      if (unsupported) throw unsupported;
      if (request.method === "subscriptions/listen") filter = parseListenFilter(params);
      else if (!hasMethod(server, request.method)) {
        throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
      }
    } catch (error) {
      return fail(request.id, isMcpError(error) ? error : invalidParams(String(error)));
    }
    if (filter) {
      const key = String(request.id);
      const writer = { send: write, raw: () => {}, close: () => listens.get(key)?.() };
      const remove = hub.add(listenSink(request.id, writer, filter));
      listens.set(key, () => {
        remove();
        listens.delete(key);
      });
      return;
    }
    void run(request, {
      era: "modern",
      protocolVersion: meta.version,
      clientCapabilities: meta.capabilities,
      clientInfo: meta.clientInfo,
      logLevel: meta.logLevel,
      onError,
    });
  }

  function legacy(request: JsonRpcRequest): undefined {
    const params = request.params ?? {};
    if (request.method === "initialize") {
      const invalid = initializeParamsError(params);
      if (invalid) return fail(request.id, invalid);
      // stdio also serves 2024-11-05, the first revision, which never had an HTTP transport of its own.
      const protocolVersion = negotiateVersion(params.protocolVersion, STDIO_VERSIONS);
      const first = session === undefined;
      session = {
        protocolVersion,
        capabilities: isObject(params.capabilities) ? params.capabilities : {},
        clientInfo: isObject(params.clientInfo)
          ? (params.clientInfo as unknown as Implementation)
          : undefined,
        subscriptions: new Set(),
      };
      if (first) {
        const current = () => session;
        hub.add({
          wants: (event) =>
            event.kind === "resource"
              ? current()?.subscriptions.has(event.uri) === true
              : event.kind !== "task",
          deliver: write,
          keepAlive: () => {},
          end: () => {},
        });
      }
      return write({
        jsonrpc: "2.0",
        id: request.id,
        result: initializeResult(server, protocolVersion),
      });
    }
    if (!session)
      return fail(
        request.id,
        invalidParams("Send initialize first, or _meta with a protocol version"),
      );
    if (isSessionMethod(request.method)) {
      const outcome = answerSessionMethod(request.method, params, session);
      if ("error" in outcome) return fail(request.id, outcome.error);
      if (outcome.change && "logLevel" in outcome.change)
        session.logLevel = outcome.change.logLevel;
      else if (outcome.change) session.subscriptions = new Set(outcome.change.subscriptions);
      return write({ jsonrpc: "2.0", id: request.id, result: outcome.result });
    }
    void run(request, {
      era: "legacy",
      protocolVersion: session.protocolVersion,
      clientCapabilities: session.capabilities,
      clientInfo: session.clientInfo,
      logLevel: session.logLevel ?? "debug",
      request: serverRequest,
      onError,
    });
  }

  function receive(line: string): undefined {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return fail(
        undefined,
        new McpError(ErrorCode.ParseError, "Parse error: line is not valid JSON"),
      );
    }
    if (!isObject(message))
      return fail(undefined, new McpError(ErrorCode.InvalidRequest, "Invalid JSON-RPC message"));
    if (isResponse(message)) {
      const waiting = message.id === undefined ? undefined : pending.get(String(message.id));
      if (waiting) {
        pending.delete(String(message.id));
        const reply = message as {
          result?: JsonObject;
          error?: { code: number; message: string; data?: unknown };
        };
        if (reply.error)
          waiting.reject(new McpError(reply.error.code, reply.error.message, reply.error.data));
        else waiting.resolve(reply.result ?? {});
      }
      return;
    }
    if (isNotification(message)) {
      if (message.method === "notifications/cancelled") {
        const target = String(message.params?.requestId);
        inflight.get(target)?.abort(new Error("Cancelled by the client"));
        listens.get(target)?.();
      }
      return;
    }
    if (!isRequest(message)) {
      return fail(undefined, new McpError(ErrorCode.InvalidRequest, "Invalid JSON-RPC message"));
    }
    // Before anything walks them: recursive walkers would overflow the stack on deeper params.
    const tooDeep = paramsDepthError(message.params);
    if (tooDeep) return fail(message.id, tooDeep);
    if (isModernRequest(message.method, message.params)) modern(message);
    else legacy(message);
  }

  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    try {
      receive(line);
    } catch (error) {
      onError(error);
    }
  });
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const close = async () => {
    if (closed) return;
    for (const controller of inflight.values()) controller.abort(new Error("stdio closed"));
    for (const waiting of pending.values()) waiting.reject(new Error("stdio closed"));
    closed = true;
    lines.close();
    await hub.close(server.info);
    await store.close();
    finish();
  };
  // On stdin end, let running requests answer (bounded) before shutting down; not once one
  // waits for the client, which can no longer answer.
  lines.once("close", async () => {
    if (inflight.size > 0 && pending.size === 0)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => settled?.(), 5_000);
        settled = () => {
          settled = undefined;
          clearTimeout(timer);
          resolve();
        };
      });
    await close();
  });
  return { done, close };
}
