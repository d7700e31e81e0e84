/** Most items a reader that falls behind may leave unread; older ones are dropped. */
const MAX_BUFFERED = 1_000;

/**
 * An async iterator fed by pushes: what `listen` returns. `return()` (a `break` out of
 * `for await`) or `close()` ends it and runs the cleanup given at creation.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private readonly waiters: {
    resolve(result: IteratorResult<T>): void;
    reject(error: unknown): void;
  }[] = [];
  private ended = false;
  private failure: unknown;
  private readonly cleanup: () => void;
  private readonly maxBuffered: number;

  /** `maxBuffered`: items kept for a reader that falls behind (Infinity: none dropped). */
  constructor(cleanup: () => void = () => {}, maxBuffered = MAX_BUFFERED) {
    this.cleanup = cleanup;
    this.maxBuffered = maxBuffered;
  }

  /** Items pushed and not read yet. */
  get size(): number {
    return this.items.length;
  }

  /** Delivers one item. */
  push(item: T): void {
    if (this.ended) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve({ value: item, done: false });
    else {
      this.items.push(item);
      if (this.items.length > this.maxBuffered) this.items.shift();
    }
  }

  /** Ends the iteration after the buffered items; with an error, the next read throws it. */
  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    for (const waiter of this.waiters.splice(0)) {
      if (error === undefined) waiter.resolve({ value: undefined, done: true });
      else waiter.reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.ended) {
      const failure = this.failure;
      this.failure = undefined;
      return failure === undefined
        ? Promise.resolve({ value: undefined, done: true })
        : Promise.reject(failure);
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Stops listening. */
  close(): void {
    this.end();
    this.items.length = 0;
    this.cleanup();
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
