import type { JsonObject } from "../protocol/messages.js";
import { withInput } from "./input.js";
import type { McpClientOptions } from "./options.js";
import type { ServerDescription, Session } from "./session.js";
import { awaitTask, invalidTask, TASKS_DECLARED, type TaskLoop } from "./tasks.js";
import { IdleTimeout, joinSignals } from "./timeout.js";
import type { Notification, RequestOptions } from "./types.js";

const DEFAULT_TIMEOUT_MS = 60_000;

/** Methods a modern server may answer with `input_required` (spec: patterns/mrtr). */
const INPUT_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** Options of one request: a request's, and extra HTTP headers. */
export type RunOptions = RequestOptions & { headers?: Record<string, string> };

/**
 * Sends a client's requests over its session: `_meta` and progress tokens, input rounds
 * answered, the per-round timeout, progress to `onProgress` and other notifications on.
 */
export class RequestRunner {
  readonly #session: Session;
  readonly #options: McpClientOptions;
  readonly #deliver: (notification: Notification) => void;
  #nextToken = 1;
  /** Aborted by `close()`: tasks still being followed stop, and are left to run. */
  readonly #closing = new AbortController();

  constructor(
    session: Session,
    options: McpClientOptions,
    deliver: (notification: Notification) => void,
  ) {
    this.#session = session;
    this.#options = options;
    this.#deliver = deliver;
  }

  /** Sends a request and follows it to its result: input rounds, then a task if one was made. */
  async request(method: string, params: JsonObject, options: RunOptions): Promise<JsonObject> {
    const meta: JsonObject = { ...options.meta };
    if (options.onProgress) meta.progressToken = `progress-${this.#nextToken++}`;
    const once = (roundParams: JsonObject) => this.#roundTrip(method, roundParams, options, meta);
    const name = params.name ?? params.uri;
    const result = INPUT_METHODS.has(method)
      ? await withInput(method, params, once, {
          handlers: this.#options.onInput ?? {},
          maxRounds: this.#options.maxInputRounds ?? 8,
          signal: options.signal ?? new AbortController().signal,
          ...(typeof name === "string" ? { name } : {}),
        })
      : await once(params);
    if (result.resultType !== "task") return result;
    // Only a request that declared the extension may get a task (ext-tasks: capability negotiation).
    if (!this.#declaresTasks(method) || method !== "tools/call") {
      throw invalidTask(`The server answered ${method} with a task it was not offered`);
    }
    return awaitTask(result, this.#taskLoop(options, typeof name === "string" ? name : undefined));
  }

  /** Follows a task the server created for a `tools/call` to its result. */
  async resumeTask(taskId: string, options: RequestOptions): Promise<JsonObject> {
    const loop = this.#taskLoop(options, undefined);
    const state = await loop.send("tasks/get", { taskId }, options.signal);
    return awaitTask(state, loop);
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

  /** Stops following tasks: the client closed. */
  close(): void {
    this.#closing.abort(new Error("The client was closed"));
  }

  #taskLoop(options: RequestOptions, name: string | undefined): TaskLoop {
    // Polls carry no progress token: progress does not apply to tasks (ext-tasks).
    const { timeoutMs } = options;
    const closing = this.#closing.signal;
    const signal = options.signal ? AbortSignal.any([options.signal, closing]) : closing;
    const loop: TaskLoop = {
      send: (method, params, roundSignal) =>
        this.#roundTrip(
          method,
          params,
          {
            ...(roundSignal ? { signal: roundSignal } : {}),
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          },
          {},
        ),
      handlers: this.#options.onInput ?? {},
      signal,
      detach: closing,
    };
    if (name !== undefined) loop.name = name;
    if (options.onTask) loop.onTask = options.onTask;
    return loop;
  }

  /** One round trip: the timeout, headers and per-request extensions applied, notifications routed. */
  async #roundTrip(
    method: string,
    params: JsonObject,
    options: RunOptions,
    meta: JsonObject,
  ): Promise<JsonObject> {
    const timeout = this.#timeout(options);
    try {
      return await this.#session.request(method, params, {
        signal: joinSignals(options.signal, timeout),
        meta,
        ...(options.headers ? { headers: options.headers } : {}),
        ...(this.#declaresTasks(method) ? { extensions: TASKS_DECLARED } : {}),
        onNotification: (notification) => {
          if (notification.method === "notifications/progress") timeout?.touch();
          this.#onRequestNotification(notification, options);
        },
      });
    } finally {
      timeout?.clear();
    }
  }

  /**
   * The tasks extension goes on `tools/call` and the `tasks/*` methods of the modern era, unless
   * turned off; legacy sessions never declare it, so their calls block.
   */
  #declaresTasks(method: string): boolean {
    if (this.#options.tasks === false || this.#session.era !== "modern") return false;
    return method === "tools/call" || method.startsWith("tasks/");
  }

  /** The round trip's timeout, unless turned off with 0. */
  #timeout(options: RequestOptions): IdleTimeout | undefined {
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return timeoutMs > 0 ? new IdleTimeout(timeoutMs) : undefined;
  }

  /** A request's progress goes to its `onProgress`; anything else it brings is delivered. */
  #onRequestNotification(notification: Notification, options: RequestOptions): void {
    if (notification.method !== "notifications/progress") {
      this.#deliver(notification);
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
