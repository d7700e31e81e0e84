/**
 * A timeout that counts silence, not total time: it aborts its signal with a `TimeoutError`
 * once `ms` pass without `touch()`. A request's progress notifications touch it, so a long
 * tool that keeps reporting progress is not cut off.
 */
export class IdleTimeout {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  readonly #ms: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    this.signal = this.#controller.signal;
    this.#ms = ms;
    this.touch();
  }

  /** Starts the count again. */
  touch(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#controller.abort(new DOMException(`No answer within ${this.#ms} ms`, "TimeoutError"));
    }, this.#ms);
  }

  /** Stops counting: the request is over. */
  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** The caller's signal joined with a timeout's, when either is given. */
export function joinSignals(
  caller: AbortSignal | undefined,
  timeout: IdleTimeout | undefined,
): AbortSignal | undefined {
  if (!timeout) return caller;
  return caller ? AbortSignal.any([caller, timeout.signal]) : timeout.signal;
}
