import type { InputHandlers } from "../client/types.js";
import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import type { InputMethod, UpstreamInput } from "./pending-channels.js";

/** How an upstream call went on: its result, its error, or input requests awaiting answers. */
export type CallStep =
  | { t: "result"; result: JsonObject }
  | { t: "error"; error: unknown }
  | { t: "input"; inputs: Record<string, UpstreamInput> };

/** An input request of the upstream and how to settle it. */
interface Waiting {
  input: UpstreamInput;
  resolve(answer: JsonObject): void;
  reject(error: unknown): void;
}

/** What the bridge hands an upstream call to start it. */
export type StartCall = (onInput: InputHandlers, signal: AbortSignal) => Promise<JsonObject>;

/** The error of a call that is no longer waiting anywhere: the client should send it again. */
export function callGone(reason: string): McpError {
  return new McpError(ErrorCode.InternalError, `The upstream call is gone: ${reason}`, {
    retryable: true,
  });
}

/**
 * An upstream call that may outlive the handler round that started it (modern era): its input
 * requests wait here, each under a fresh key, until a retry brings the client's answers; it is
 * cancelled upstream when no retry comes within the bound `park` sets.
 */
export class PendingCall {
  readonly id: string;
  readonly #controller = new AbortController();
  readonly #waiting = new Map<string, Waiting>();
  #outcome: CallStep | undefined;
  #changed!: Promise<void>;
  #wake!: () => void;
  #nextKey = 1;
  #parked: ReturnType<typeof setTimeout> | undefined;

  constructor(id: string, start: StartCall) {
    this.id = id;
    this.#rearm();
    const handlers: InputHandlers = {
      elicitation: (params, context) => this.#ask("elicitation/create", params, context.signal),
      sampling: (params, context) => this.#ask("sampling/createMessage", params, context.signal),
      roots: (context) => this.#ask("roots/list", {}, context.signal),
    };
    start(handlers, this.#controller.signal).then(
      (result) => this.#settle({ t: "result", result }),
      (error: unknown) => this.#settle({ t: "error", error }),
    );
  }

  /** True once the call has its result or error. */
  get settled(): boolean {
    return this.#outcome !== undefined;
  }

  /** Resolves with the call's outcome, or with its input requests as soon as any waits. */
  async next(): Promise<CallStep> {
    for (;;) {
      if (this.#outcome) return this.#outcome;
      if (this.#waiting.size > 0) {
        const inputs: Record<string, UpstreamInput> = {};
        for (const [key, waiting] of this.#waiting) inputs[key] = waiting.input;
        return { t: "input", inputs };
      }
      await this.#changed;
    }
  }

  /** Hands the client's answers to the input requests they are keyed by; others are ignored. */
  answer(answers: JsonObject): void {
    clearTimeout(this.#parked);
    for (const [key, answer] of Object.entries(answers)) {
      const waiting = this.#waiting.get(key);
      if (!waiting) continue;
      this.#waiting.delete(key);
      waiting.resolve(answer as JsonObject);
    }
  }

  /** Waits `timeoutMs` for the client's answers, then cancels: the round ended on a question. */
  park(timeoutMs: number, onTimeout: () => void): void {
    clearTimeout(this.#parked);
    this.#parked = setTimeout(() => {
      this.cancel(callGone(`the client did not answer within ${timeoutMs} ms`));
      onTimeout();
    }, timeoutMs);
    (this.#parked as { unref?: () => void }).unref?.();
  }

  /** Cancels the call upstream (its signal aborts) and fails whatever waits on it. */
  cancel(reason: unknown): void {
    clearTimeout(this.#parked);
    this.#controller.abort(reason);
    this.#settle({ t: "error", error: reason });
  }

  /**
   * An input request of the upstream, waiting under a fresh key (never reused within the call,
   * as the client's answers of every round travel together); it stops waiting when the
   * upstream withdraws it (`signal`).
   */
  #ask(method: InputMethod, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    const outcome = this.#outcome;
    if (outcome) return Promise.reject(outcome.t === "error" ? outcome.error : callGone("done"));
    const key = `upstream-${this.#nextKey++}`;
    return new Promise<JsonObject>((resolve, reject) => {
      const withdraw = () => {
        if (this.#waiting.delete(key)) reject(signal.reason);
      };
      const done = () => signal.removeEventListener("abort", withdraw);
      signal.addEventListener("abort", withdraw, { once: true });
      this.#waiting.set(key, {
        input: { method, params },
        resolve: (answer) => {
          done();
          resolve(answer);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      this.#wake();
    });
  }

  #settle(outcome: CallStep): void {
    if (this.#outcome) return;
    // A parked call that ends by itself keeps its timer: its outcome waits for the retry as
    // long as a question would, and the holder lets go of it then.
    this.#outcome = outcome;
    const reason = outcome.t === "error" ? outcome.error : callGone("it ended");
    for (const waiting of this.#waiting.values()) waiting.reject(reason);
    this.#waiting.clear();
    this.#wake();
  }

  /** Wakes every `next` waiting, and readies the promise the next change resolves. */
  #rearm(): void {
    this.#changed = new Promise<void>((resolve) => {
      this.#wake = () => {
        this.#rearm();
        resolve();
      };
    });
  }
}
