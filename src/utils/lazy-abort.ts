/**
 * An abort flag whose `AbortSignal` is only built when someone asks for it: creating an
 * AbortController costs more than most tool calls, and most handlers never read `ctx.signal`.
 */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Runs `listener` once on abort (at once if already aborted), without building a signal. */
  onAbort(listener: () => void): void {
    if (this.#aborted) listener();
    else {
      this.#listeners ??= [];
      this.#listeners.push(listener);
    }
  }

  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    for (const listener of this.#listeners?.splice(0) ?? []) listener();
  }
}
