import { sleep } from "./sse.js";
import type { ReconnectOptions } from "./types.js";

/**
 * The delays between reconnection attempts: doubling from `initialDelayMs` up to `maxDelayMs`,
 * each drawn from its upper half so that clients cut off together do not return together.
 */
export class Backoff {
  readonly #maxAttempts: number;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  #attempts = 0;

  constructor(options: ReconnectOptions = {}) {
    this.#maxAttempts = options.maxAttempts ?? 10;
    this.#initialDelayMs = options.initialDelayMs ?? 250;
    this.#maxDelayMs = options.maxDelayMs ?? 5_000;
    for (const [name, value] of Object.entries(options)) {
      if (value !== undefined && (typeof value !== "number" || !(value >= 0))) {
        throw new RangeError(`reconnect.${name} must be a number of 0 or more`);
      }
    }
  }

  /** A connection held: the next failure starts again from the first delay. */
  reset(): void {
    this.#attempts = 0;
  }

  /**
   * Waits before the next attempt; rejects when the attempts in a row ran out (with `cause`,
   * why the last connection ended) or when `signal` aborts.
   */
  async wait(cause: unknown, signal: AbortSignal): Promise<void> {
    if (this.#attempts >= this.#maxAttempts) {
      throw new Error(`Gave up reconnecting after ${this.#attempts} attempts`, { cause });
    }
    const delay = Math.min(this.#maxDelayMs, this.#initialDelayMs * 2 ** this.#attempts++);
    await sleep(delay / 2 + (Math.random() * delay) / 2, signal);
  }
}
