import type { SessionStore } from "../../store/types.js";
import { ChurnMap } from "../../utils/churn-map.js";

/**
 * Keeps this process's marks on the sessions it is busy with (see `SessionStore.markActive`):
 * a session is marked while this process holds anything of it (a stream, a running request, a
 * server request awaiting its answer), so no other process evicts it for its client's cap.
 *
 * A request's mark rides on its session's read (`activeFor`), so it costs no round trip of its
 * own; it is "pending" from the read ({@link reading}) until the request holds the session here,
 * so a release meanwhile does not clear the mark that read just set. Marks and unmarks go out
 * in the order taken, on one connection to the session's node, so the store ends as this
 * process's own view (the Redis store sends a turn's unmarks together at its end, and drops one
 * that a new mark overtakes).
 */
export class SessionActivity {
  readonly #store: SessionStore;
  readonly #owner: string;
  readonly #isHeld: (sessionId: string) => boolean;
  readonly #onError: (error: unknown) => void;
  /** Reads that marked a session and have not yet held it, by session. */
  readonly #pending = new ChurnMap<string, number>();

  constructor(
    store: SessionStore,
    owner: string,
    isHeld: (sessionId: string) => boolean,
    onError: (error: unknown) => void,
  ) {
    this.#store = store;
    this.#owner = owner;
    this.#isHeld = isHeld;
    this.#onError = onError;
  }

  /**
   * A read of the session that marks it (its `activeFor`) begins: the mark is pending until the
   * session is {@link held} here, or until {@link readFailed} says the read found nothing.
   */
  reading(sessionId: string): void {
    this.#pending.set(sessionId, (this.#pending.get(sessionId) ?? 0) + 1);
  }

  /** A marking read found nothing (gone, another principal's, or the store failed). */
  readFailed(sessionId: string): void {
    this.#settle(sessionId);
    if (!this.#pending.has(sessionId) && !this.#isHeld(sessionId)) this.#unmark(sessionId);
  }

  /** The session is held here now: `created` when it was not before. */
  held(sessionId: string, created: boolean): void {
    if (this.#pending.has(sessionId)) this.#settle(sessionId);
    else if (created)
      this.#store
        .markActive(sessionId, this.#owner)
        .catch((error: unknown) => this.#onError(error));
  }

  /** Nothing of the session is held here any more. */
  released(sessionId: string): void {
    if (!this.#pending.has(sessionId)) this.#unmark(sessionId);
  }

  #settle(sessionId: string): void {
    const left = (this.#pending.get(sessionId) ?? 1) - 1;
    if (left > 0) this.#pending.set(sessionId, left);
    else this.#pending.delete(sessionId);
  }

  #unmark(sessionId: string): void {
    // One handler for every unmark: a request's release makes no closure.
    this.#store.unmarkActive(sessionId, this.#owner).catch(this.#onError);
  }
}
