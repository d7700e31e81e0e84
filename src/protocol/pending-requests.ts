import { McpError } from "./errors.js";
import type { JsonObject, RequestId } from "./messages.js";
import { isObject } from "./messages.js";

/** How one request waits for its answer. */
export interface PendingRequestOptions<Payload> {
  /** Gives up after this many milliseconds. @default no limit */
  timeoutMs?: number;
  /** The error a timeout rejects with. @default an Error naming the id and the wait */
  timeoutError?: () => unknown;
  /** Stops waiting when it aborts; an already aborted signal means the request is never sent. */
  signal?: AbortSignal;
  /** The error an abort rejects with. @default the signal's reason */
  abortError?: () => unknown;
  /** Data kept with the entry, so it can be found by more than its id (see `find`). */
  payload?: Payload;
}

interface Entry<Result, Payload> {
  resolve(result: Result): void;
  reject(error: unknown): void;
  payload: Payload | undefined;
}

/**
 * Requests we sent over a message channel, by id, awaiting the other side's answer: each settles
 * once, on its answer, its timeout, its signal or the channel's close, and then leaves the map.
 * `Result` is what an answer carries; `Payload` is what a caller keeps with each entry.
 *
 * @example
 * const pending = new PendingRequests<JsonObject>();
 * const answer = pending.request("s1", () => write({ jsonrpc: "2.0", id: "s1", method: "ping" }), {
 *   timeoutMs: 5_000,
 * });
 * // when the reply arrives: pending.resolve("s1", reply.result);
 */
export class PendingRequests<Result, Payload = undefined> {
  readonly #entries = new Map<RequestId, Entry<Result, Payload>>();

  /** Requests awaiting an answer. */
  get size(): number {
    return this.#entries.size;
  }

  /** True while `id` awaits an answer. */
  has(id: RequestId): boolean {
    return this.#entries.has(id);
  }

  /** The payload kept with `id`, while it awaits an answer. */
  payload(id: RequestId): Payload | undefined {
    return this.#entries.get(id)?.payload;
  }

  /** The first waiting entry's payload that `matches`. */
  find(matches: (payload: Payload | undefined) => boolean): Payload | undefined {
    for (const entry of this.#entries.values()) if (matches(entry.payload)) return entry.payload;
    return undefined;
  }

  /**
   * Registers `id`, then calls `send` to put the request on the wire; resolves with the answer.
   * Nothing is sent when the signal has already aborted or `id` is already waiting; a `send`
   * that throws or rejects fails the request with its error.
   */
  request(
    id: RequestId,
    send: () => unknown,
    options: PendingRequestOptions<Payload> = {},
  ): Promise<Result> {
    const { signal, timeoutMs } = options;
    if (this.#entries.has(id))
      return Promise.reject(new Error(`Request id ${String(id)} is already awaiting an answer`));
    if (signal?.aborted) return Promise.reject(abortError(options));
    return new Promise<Result>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#entries.delete(id);
      };
      const onAbort = () => {
        settle();
        reject(abortError(options));
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              settle();
              reject(options.timeoutError?.() ?? timeoutError(id, timeoutMs));
            }, timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#entries.set(id, {
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
        payload: options.payload,
      });
      try {
        Promise.resolve(send()).catch((error: unknown) => this.reject(id, error));
      } catch (error) {
        this.reject(id, error);
      }
    });
  }

  /** Settles `id` with its answer; false when nothing waits for it. */
  resolve(id: RequestId, result: Result): boolean {
    const entry = this.#entries.get(id);
    entry?.resolve(result);
    return entry !== undefined;
  }

  /** Fails `id`; false when nothing waits for it. */
  reject(id: RequestId, error: unknown): boolean {
    const entry = this.#entries.get(id);
    entry?.reject(error);
    return entry !== undefined;
  }

  /** Fails every waiting request with `error`: the channel is gone. */
  rejectAll(error: unknown): void {
    for (const entry of [...this.#entries.values()]) entry.reject(error);
  }
}

/** A JSON-RPC answer as it arrives: a result, or an error object. */
export interface JsonRpcReply {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown } | undefined;
}

/**
 * Settles `id` from a JSON-RPC reply: its error as an {@link McpError}, else its result (`{}`
 * when the result is not an object); false when nothing waits for it.
 */
export function settleWithReply(
  pending: PendingRequests<JsonObject, unknown>,
  id: RequestId,
  reply: JsonRpcReply,
): boolean {
  const { error, result } = reply;
  if (error) return pending.reject(id, new McpError(error.code, error.message, error.data));
  return pending.resolve(id, isObject(result) ? result : {});
}

function abortError(options: PendingRequestOptions<unknown>): unknown {
  return options.abortError ? options.abortError() : options.signal?.reason;
}

function timeoutError(id: RequestId, ms: number): Error {
  return new Error(`No answer to request ${String(id)} within ${ms} ms`);
}
