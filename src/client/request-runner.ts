import type { Context } from "@opentelemetry/api";
import type { JsonObject } from "../protocol/messages.js";
import { ClientCall } from "../telemetry/client-operation.js";
import { otel } from "../telemetry/otel.js";
import { clientExtensions } from "./ext/index.js";
import type { ClientExtension, ExtensionRequest } from "./extension.js";
import { withInput } from "./input.js";
import type { McpClientOptions } from "./options.js";
import type { RequestTrace, ServerDescription, Session } from "./session.js";
import { IdleTimeout, joinSignals } from "./timeout.js";
import type { InputContext, Notification, RequestOptions } from "./types.js";

const DEFAULT_TIMEOUT_MS = 60_000;

/** Methods a modern server may answer with `input_required` (spec: patterns/mrtr). */
const INPUT_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** Options of one request: a request's, extra HTTP headers, and a taker of its notifications. */
export type RunOptions = RequestOptions & {
  headers?: Record<string, string>;
  /** Takes the notifications of the request's own stream instead of the client (events/stream). */
  onNotification?: (notification: Notification) => void;
};

/**
 * Sends a client's requests over its session: `_meta` and progress tokens, input rounds
 * answered, the per-round timeout, progress to `onProgress` and other notifications on.
 */
export class RequestRunner {
  readonly #session: Session;
  readonly #options: McpClientOptions;
  readonly #deliver: (notification: Notification) => void;
  readonly #extensions: readonly ClientExtension[];
  #nextToken = 1;
  /** Aborted by `close()`: what extensions still follow (tasks) stops, and is left to run. */
  readonly #closing = new AbortController();

  constructor(
    session: Session,
    options: McpClientOptions,
    deliver: (notification: Notification) => void,
  ) {
    this.#session = session;
    this.#options = options;
    this.#deliver = deliver;
    this.#extensions = clientExtensions(options);
  }

  /**
   * Sends a request and follows it to its result: input rounds, then what an extension makes
   * of a result the core does not know (a created task). A modern request that may take
   * rounds is one logical call: a span of its own, each round a CLIENT span under it.
   */
  async request(method: string, params: JsonObject, options: RunOptions): Promise<JsonObject> {
    const telemetry = this.#session.config.telemetry;
    const pending = telemetry?.pending;
    if (pending) await pending;
    if (!telemetry?.live) return this.#follow(method, params, options, undefined);
    const { context } = otel()!;
    const parent = context.active();
    if (this.#session.era !== "modern" || !INPUT_METHODS.has(method))
      return this.#follow(method, params, options, { parent });
    const call = new ClientCall(telemetry, { method, params }, parent);
    try {
      // Active too, so spans the app starts in its onInput callbacks go under the call.
      const result = await context.with(call.context, () =>
        this.#follow(method, params, options, { parent: call.context, call }),
      );
      call.end({ result });
      return result;
    } catch (error) {
      call.endWithError(error);
      throw error;
    }
  }

  /**
   * The request's round trips and extensions' follow-ups; while they last, a request with its
   * own `onInput` is known to be in flight (see `InputRouter`).
   */
  async #follow(
    method: string,
    params: JsonObject,
    options: RunOptions,
    trace: { parent: Context; call?: ClientCall } | undefined,
  ): Promise<JsonObject> {
    if (!options.onInput) return this.#rounds(method, params, options, trace);
    const context: InputContext = {
      method,
      signal: options.signal ?? new AbortController().signal,
    };
    const name = params.name ?? params.uri;
    if (typeof name === "string") context.name = name;
    const untrack = this.#session.config.input.track(options.onInput, context);
    try {
      return await this.#rounds(method, params, options, trace);
    } finally {
      untrack();
    }
  }

  /** The request's round trips and extensions' follow-ups, their spans under `trace.parent`. */
  async #rounds(
    method: string,
    params: JsonObject,
    options: RunOptions,
    trace: { parent: Context; call?: ClientCall } | undefined,
  ): Promise<JsonObject> {
    const meta: JsonObject = { ...options.meta };
    if (options.onProgress) meta.progressToken = `progress-${this.#nextToken++}`;
    const roundTrace = (): RequestTrace | undefined =>
      trace && { parent: trace.parent, round: trace.call?.nextRound() };
    const once = (roundParams: JsonObject) =>
      this.#roundTrip(method, roundParams, options, meta, roundTrace());
    const name = params.name ?? params.uri;
    const result = INPUT_METHODS.has(method)
      ? await withInput(method, params, once, {
          handlers: this.#session.config.input.handlersOf(options.onInput),
          maxRounds: this.#options.maxInputRounds ?? 8,
          signal: options.signal ?? new AbortController().signal,
          ...(typeof name === "string" ? { name } : {}),
        })
      : await once(params);
    // Results the core knows are answers; any other kind is an extension's to follow.
    if (result.resultType === undefined || result.resultType === "complete") return result;
    const request = this.extensionRequest(method, params, options, trace?.parent);
    for (const extension of this.#extensions) {
      const followed = extension.follow(result, request);
      if (followed) return followed;
    }
    return result;
  }

  /**
   * The request as extensions see it: follow-up round trips carry its timeout, not its progress,
   * and their spans go under `parent` (the call's span).
   */
  extensionRequest(
    method: string,
    params: JsonObject,
    options: RequestOptions,
    parent: Context | undefined = this.#session.config.telemetry
      ? otel()?.context.active()
      : undefined,
  ): ExtensionRequest {
    const { timeoutMs, onInput } = options;
    const trace = parent ? { parent } : undefined;
    return {
      method,
      params,
      options,
      era: this.#session.era,
      handlers: this.#session.config.input.handlersOf(options.onInput),
      closing: this.#closing.signal,
      send: (roundMethod, roundParams, signal) =>
        this.#roundTrip(
          roundMethod,
          roundParams,
          {
            ...(signal ? { signal } : {}),
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            ...(onInput ? { onInput } : {}),
          },
          {},
          trace,
        ),
    };
  }

  /** Reads `server/discover` again under the request timeout. */
  async discover(options: RequestOptions): Promise<ServerDescription> {
    const timeout = this.#timeout(options);
    try {
      return await this.#session.discover({ signal: joinSignals(options.signal, timeout) });
    } finally {
      timeout?.clear();
    }
  }

  /** Stops what extensions still follow: the client closed. */
  close(): void {
    this.#closing.abort(new Error("The client was closed"));
  }

  /** One round trip: the timeout, headers and per-request extensions applied, notifications routed. */
  async #roundTrip(
    method: string,
    params: JsonObject,
    options: RunOptions,
    meta: JsonObject,
    trace: RequestTrace | undefined,
  ): Promise<JsonObject> {
    const timeout = this.#timeout(options);
    const extensions = this.#declarations(method);
    try {
      return await this.#session.request(method, params, {
        signal: joinSignals(options.signal, timeout),
        meta,
        ...(options.headers ? { headers: options.headers } : {}),
        ...(extensions ? { extensions } : {}),
        ...(trace ? { trace } : {}),
        ...(options.onInput ? { onInput: options.onInput } : {}),
        onNotification: (notification) => {
          if (notification.method === "notifications/progress") timeout?.touch();
          this.#onRequestNotification(notification, options);
        },
      });
    } finally {
      timeout?.clear();
    }
  }

  /** What the extensions declare on a request of `method`, keyed by their ids. */
  #declarations(method: string): JsonObject | undefined {
    const declared: JsonObject = {};
    for (const extension of this.#extensions) {
      const settings = extension.declaredOn(method, this.#session.era);
      if (settings) declared[extension.id] = settings;
    }
    return Object.keys(declared).length > 0 ? declared : undefined;
  }

  /** The round trip's timeout, unless turned off with 0. */
  #timeout(options: RequestOptions): IdleTimeout | undefined {
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return timeoutMs > 0 ? new IdleTimeout(timeoutMs) : undefined;
  }

  /** A request's progress goes to its `onProgress`; anything else it brings is delivered. */
  #onRequestNotification(notification: Notification, options: RunOptions): void {
    if (notification.method !== "notifications/progress") {
      (options.onNotification ?? this.#deliver)(notification);
      return;
    }
    const params = notification.params ?? {};
    const progress: { progress: number; total?: number; message?: string } = {
      progress: Number(params.progress),
    };
    if (typeof params.total === "number") progress.total = params.total;
    if (typeof params.message === "string") progress.message = params.message;
    options.onProgress?.(progress);
  }
}
