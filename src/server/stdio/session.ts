import { ErrorCode, isMcpError, McpError } from "../../protocol/errors.js";
import type {
  JsonObject,
  JsonRpcMessage,
  JsonRpcRequest,
  RequestId,
} from "../../protocol/messages.js";
import {
  isNotification,
  isObject,
  isRequest,
  isRequestId,
  isResponse,
} from "../../protocol/messages.js";
import { answerDepthError, paramsDepthError } from "../../protocol/params.js";
import { PendingRequests, settleWithReply } from "../../protocol/pending-requests.js";
import type { McpStore } from "../../store/types.js";
import { ServerOperation } from "../../telemetry/server-operation.js";
import type { Telemetry } from "../../telemetry/telemetry.js";
import { LazyAbort } from "../../utils/lazy-abort.js";
import { publishChange } from "../channels.js";
import { dispatch } from "../dispatch.js";
import type { EventsOptions } from "../ext/events/index.js";
import { registryExtensions, storeExtensions } from "../ext/index.js";
import { addedExtensions } from "../extension.js";
import { ListenHub } from "../listen-hub.js";
import type { ChangeEvent, McpServer } from "../mcp-server.js";
import type { DispatchServices } from "../method-handlers.js";
import { isModernRequest } from "../modern-meta.js";
import { createStateSealer } from "../request-state.js";
import type { EraEnv, StdioChannel } from "./channel.js";
import { LegacyStdio } from "./legacy.js";
import { ModernStdio } from "./modern.js";

/** Options of {@link StdioSession}. */
export interface StdioSessionOptions {
  /** Writes one message to the client. */
  send(message: JsonRpcMessage): void;
  /** Its bus carries change events, its nonces the single-use request states. */
  store: McpStore;
  /** Key material for sealing `requestState`. @default a random per-process key */
  secret?: string | Uint8Array | undefined;
  /** Reports errors the client does not see in full. */
  onError(error: unknown): void;
  /** Spans and metrics per message; none when off. */
  telemetry?: Telemetry | undefined;
  /** The Events extension (poll and push; its `webhooks` are HTTP only); `false` turns it off. @default {} */
  events?: EventsOptions | false | undefined;
}

/**
 * Reading and answering; waiting, once the input ended, for the requests still running;
 * or closed, writing nothing more.
 */
type Lifecycle =
  | { phase: "open" }
  | { phase: "draining"; stopWaiting(): void }
  | { phase: "ended" }
  | { phase: "closed" };

/**
 * Serves one client over one bidirectional message channel, the way stdio does (PROTOCOL §4):
 * each request goes to its era (modern when it carries `_meta`, else the process's legacy
 * session); answers to our server requests settle them; `notifications/cancelled` stops a call
 * or a listen stream. The transport only frames messages and feeds them to `receive`.
 */
export class StdioSession {
  readonly #options: StdioSessionOptions;
  readonly #channel: StdioChannel;
  readonly #services: DispatchServices;
  readonly #running = new Map<string, LazyAbort>();
  readonly #pending = new PendingRequests<JsonObject>();
  /** The last message waiting for the OpenTelemetry API to load (telemetry), if any. */
  #deferred: Promise<void> | undefined;
  /** The spans of requests not answered yet, by id (telemetry). */
  readonly #operations = new Map<string, ServerOperation>();
  readonly #modern: ModernStdio;
  readonly #legacy: LegacyStdio;
  #lifecycle: Lifecycle = { phase: "open" };
  #nextServerRequest = 0;

  constructor(server: McpServer, options: StdioSessionOptions) {
    this.#options = options;
    const { store, onError } = options;
    const publish = (event: ChangeEvent) => void publishChange(store.bus, event).catch(onError);
    const host = { server, store, publish, onError };
    const extensions = [
      ...registryExtensions(server),
      // Webhooks need a principal to subscribe with, which stdio has not: HTTP only.
      ...storeExtensions(host, options.events && { ...options.events, webhooks: false }),
      ...addedExtensions(host),
    ];
    this.#services = {
      extensions,
      sealer: createStateSealer(options.secret),
      nonces: store.nonces,
      stateTtlMs: 300_000,
      singleUseState: false,
      telemetry: options.telemetry,
    };
    this.#channel = {
      server,
      extensions,
      hub: new ListenHub(server, { bus: store.bus, keepAliveMs: 0, onError }),
      onError,
      write: (message) => this.#write(message),
      fail: (id, error) => this.#fail(id, error),
      run: (request, env) => void this.#run(request, env),
      request: (method, params, signal, onSent) => this.#request(method, params, signal, onSent),
    };
    this.#modern = new ModernStdio(this.#channel);
    this.#legacy = new LegacyStdio(this.#channel);
  }

  /** True once {@link close} ran. */
  get closed(): boolean {
    return this.#lifecycle.phase === "closed";
  }

  /** Handles one message read from the client, inside its span when telemetry is on. */
  receive(message: unknown): undefined {
    const telemetry = this.#options.telemetry;
    // While the OpenTelemetry API loads (an SDK registered), messages wait for it, in order.
    const pending = telemetry?.pending;
    if (pending) {
      this.#deferred = pending.then(() => this.receive(message)).catch(this.#options.onError);
      return;
    }
    if (
      !telemetry?.live ||
      !isObject(message) ||
      isResponse(message) ||
      typeof message.method !== "string"
    )
      return this.#receive(message);
    const id = isRequestId(message.id) ? message.id : undefined;
    const params = isObject(message.params) ? message.params : undefined;
    if (telemetry.passesThrough(params)) return this.#receive(message);
    const operation = new ServerOperation(
      telemetry,
      { method: message.method, id, params },
      { transport: "pipe" },
    );
    if (id === undefined) {
      operation.run(() => this.#receive(message));
      operation.end();
      return;
    }
    this.#operations.set(String(id), operation);
    return operation.run(() => this.#receive(message));
  }

  #receive(message: unknown): undefined {
    if (!isObject(message)) return this.#fail(undefined, invalidMessage());
    if (isResponse(message)) {
      if (message.id !== undefined) settleWithReply(this.#pending, String(message.id), message);
      return;
    }
    if (isNotification(message)) {
      if (message.method === "notifications/cancelled") {
        const target = String(message.params?.requestId);
        this.#running.get(target)?.abort(new Error("Cancelled by the client"));
        this.#modern.cancel(target);
      }
      return;
    }
    if (!isRequest(message)) return this.#fail(undefined, invalidMessage());
    // Before anything walks them: recursive walkers would overflow the stack on deeper params.
    const tooDeep = paramsDepthError(message.params);
    if (tooDeep) return this.#fail(message.id, tooDeep);
    if (isModernRequest(message.method, message.params)) this.#modern.serve(message);
    else this.#legacy.serve(message);
  }

  /** Answers a message that could not be read at all, so has no id to answer to. */
  refuse(error: McpError): undefined {
    return this.#fail(undefined, error);
  }

  /**
   * Once the input ended: waits up to `ms` for the running requests to answer; not when one
   * waits for the client, which can no longer answer.
   */
  async drain(ms: number): Promise<void> {
    await this.#deferred; // messages still waiting for the OpenTelemetry API to load start first
    // Streams (events/stream) answer now: they would run until cancelled, which nobody can now.
    for (const extension of this.#channel.extensions) extension.endStreams?.();
    if (this.#running.size === 0 || this.#pending.size > 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#stopWaiting(), ms);
      const stopWaiting = () => {
        clearTimeout(timer);
        this.#lifecycle = { phase: "ended" };
        resolve();
      };
      this.#lifecycle = { phase: "draining", stopWaiting };
    });
  }

  /** Ends running requests and those awaiting the client, writes nothing more, ends listen streams. */
  close(): Promise<void> {
    if (this.#lifecycle.phase === "closed") return Promise.resolve();
    this.#stopWaiting();
    const reason = new Error("stdio closed");
    for (const abort of this.#running.values()) abort.abort(reason);
    this.#pending.rejectAll(reason);
    this.#lifecycle = { phase: "closed" };
    const { hub, server, extensions } = this.#channel;
    return Promise.all([
      hub.close(server.info),
      ...extensions.map((extension) => extension.close?.()),
    ]).then(() => undefined);
  }

  #write(message: JsonRpcMessage): undefined {
    if (this.#lifecycle.phase !== "closed") this.#options.send(message);
    if (this.#operations.size > 0 && "id" in message && !("method" in message))
      this.#answered(message);
    return undefined;
  }

  /** Ends the span of a request answered without the dispatcher (which ends its own). */
  #answered(message: JsonRpcMessage & { id?: RequestId }): void {
    const key = String(message.id);
    const operation = this.#operations.get(key);
    if (!operation) return;
    this.#operations.delete(key);
    if (operation.claimed) return;
    const answer = message as { error?: { code: number; message: string }; result?: JsonObject };
    operation.end({ error: answer.error, result: answer.result });
  }

  #fail(id: RequestId | undefined, error: McpError): undefined {
    return this.#write(
      id === undefined
        ? { jsonrpc: "2.0", error: error.toJSON() }
        : { jsonrpc: "2.0", id, error: error.toJSON() },
    );
  }

  #stopWaiting(): void {
    if (this.#lifecycle.phase === "draining") this.#lifecycle.stopWaiting();
  }

  async #run(request: JsonRpcRequest, env: EraEnv): Promise<void> {
    const key = String(request.id);
    const abort = new LazyAbort();
    this.#running.set(key, abort);
    const send = (message: JsonRpcMessage) => (abort.aborted ? undefined : this.#write(message));
    const call = { id: request.id, method: request.method, params: request.params ?? {} };
    const operation = this.#operations.get(key);
    try {
      const result = await dispatch(this.#channel.server, this.#services, call, {
        ...env,
        abort,
        send,
        ...(operation && { operation }),
      });
      // A cancelled request gets no response (spec: patterns/cancellation).
      if (!abort.aborted) this.#write({ jsonrpc: "2.0", id: request.id, result });
    } catch (error) {
      if (!isMcpError(error)) this.#options.onError(error);
      const known = isMcpError(error)
        ? error
        : new McpError(ErrorCode.InternalError, "Internal error");
      if (!abort.aborted) this.#fail(request.id, known);
    } finally {
      // A cancelled request gets no answer: its span was ended by the dispatcher all the same.
      this.#operations.delete(key);
      this.#running.delete(key);
      if (this.#running.size === 0) this.#stopWaiting();
    }
  }

  async #request(
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    onSent?: (id: RequestId) => void,
  ): Promise<JsonObject> {
    const id = `s${++this.#nextServerRequest}`;
    onSent?.(id);
    const answer = this.#pending.request(
      id,
      () => this.#write({ jsonrpc: "2.0", id, method, params }),
      { signal, abortError: () => new Error(`${method} was cancelled`) },
    );
    // Once the input has ended, nobody can answer: stop waiting for running requests.
    if (this.#pending.has(id)) this.#stopWaiting();
    const result = await answer;
    const tooDeep = answerDepthError(method, result);
    if (tooDeep) throw tooDeep;
    return result;
  }
}

function invalidMessage(): McpError {
  return new McpError(ErrorCode.InvalidRequest, "Invalid JSON-RPC message");
}
