import type { LazyAbort } from "../../utils/lazy-abort.js";

/** A session's client requests running in this process, by id, so a cancellation finds them. */
export class RunningRequests {
  // A session mostly runs one request at a time, each in a new held session: the first is kept
  // in two fields, and a Map is made only for a second one running beside it.
  #oneId: string | undefined;
  #one: LazyAbort | undefined;
  #byId: Map<string, LazyAbort> | undefined;

  get size(): number {
    return (this.#one === undefined ? 0 : 1) + (this.#byId?.size ?? 0);
  }

  /** The ids of the requests running now. */
  ids(): string[] {
    const ids = [...(this.#byId?.keys() ?? [])];
    if (this.#one !== undefined) ids.unshift(this.#oneId!);
    return ids;
  }

  /** Records a request running here; returns its untracking. */
  track(requestId: string, abort: LazyAbort): () => void {
    if (this.#one === undefined && this.#byId === undefined) {
      this.#oneId = requestId;
      this.#one = abort;
    } else {
      this.#byId ??= new Map();
      const byId = this.#byId;
      if (this.#one !== undefined) byId.set(this.#oneId!, this.#one);
      this.#oneId = this.#one = undefined;
      byId.set(requestId, abort);
    }
    return () => {
      if (this.#one === abort) {
        this.#oneId = this.#one = undefined;
        return;
      }
      // Another request of the same id took its place: that one is still running.
      const byId = this.#byId;
      if (byId?.get(requestId) !== abort) return;
      byId.delete(requestId);
      if (byId.size === 0) this.#byId = undefined;
    };
  }

  /** Cancels a request running here; false when none by that id runs here. */
  cancel(requestId: string): boolean {
    const running =
      this.#one !== undefined && this.#oneId === requestId ? this.#one : this.#byId?.get(requestId);
    running?.abort(new Error("Cancelled by the client"));
    return running !== undefined;
  }

  /** Aborts every request running here, and forgets them. */
  abortAll(reason: string): void {
    const running = [
      ...(this.#one === undefined ? [] : [this.#one]),
      ...(this.#byId?.values() ?? []),
    ];
    this.#oneId = this.#one = this.#byId = undefined;
    for (const abort of running) abort.abort(new Error(reason));
  }
}
