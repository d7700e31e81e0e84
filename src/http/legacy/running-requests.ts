import type { LazyAbort } from "../../utils/lazy-abort.js";

/** A session's client requests running in this process, by id, so a cancellation finds them. */
export class RunningRequests {
  // Made for the first request and dropped with the last: emptying a Map makes V8 allocate it a
  // smaller table, on every request of a session that runs one at a time.
  #byId: Map<string, LazyAbort> | undefined;

  get size(): number {
    return this.#byId?.size ?? 0;
  }

  /** The ids of the requests running now. */
  ids(): string[] {
    return [...(this.#byId?.keys() ?? [])];
  }

  /** Records a request running here; returns its untracking. */
  track(requestId: string, abort: LazyAbort): () => void {
    this.#byId ??= new Map();
    const byId = this.#byId;
    byId.set(requestId, abort);
    return () => {
      // Another request of the same id took its place: that one is still running.
      if (byId.get(requestId) !== abort) return;
      if (byId.size === 1 && this.#byId === byId) this.#byId = undefined;
      else byId.delete(requestId);
    };
  }

  /** Cancels a request running here; false when none by that id runs here. */
  cancel(requestId: string): boolean {
    const running = this.#byId?.get(requestId);
    running?.abort(new Error("Cancelled by the client"));
    return running !== undefined;
  }

  /** Aborts every request running here, and forgets them. */
  abortAll(reason: string): void {
    const byId = this.#byId;
    this.#byId = undefined;
    for (const abort of byId?.values() ?? []) abort.abort(new Error(reason));
  }
}
