/** One caller waiting for a slot. */
interface Waiter {
  grant(): void;
  fail(error: unknown): void;
}

/**
 * A fixed number of slots handed out first come, first served: a caller waits in line for
 * one, until its signal aborts or the slots close.
 */
export class Slots {
  #free: number;
  readonly #line: Waiter[] = [];
  #closedWith: unknown;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError("maxConcurrency must be an integer of 1 or more");
    }
    this.#free = size;
  }

  /** Callers waiting in line. */
  get waiting(): number {
    return this.#line.length;
  }

  /** Resolves once a slot is the caller's; rejects with the signal's reason or the close's error. */
  take(signal?: AbortSignal): Promise<void> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = this.#line.indexOf(waiter);
        if (at !== -1) this.#line.splice(at, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        fail: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#line.push(waiter);
    });
  }

  /** Gives a slot back: to the first in line, else to the pool. */
  give(): void {
    const next = this.#line.shift();
    if (next) next.grant();
    else this.#free++;
  }

  /** Refuses every caller from now on, those in line with `error` at once. */
  close(error: unknown): void {
    this.#closedWith = error;
    for (const waiter of this.#line.splice(0)) waiter.fail(error);
  }
}
