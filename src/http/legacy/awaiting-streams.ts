import type { LegacyStream } from "./stream.js";

/** Options of {@link AwaitingStreams}. */
export interface AwaitingStreamsOptions {
  /** How long a stream waits for its client to resume it. */
  windowMs: number;
  /** Most streams waiting at once, of anyone's. */
  capacity: number;
  /** Most of them one client's. */
  perClient: number;
  /** Lets go of a stream that waited too long, or was pushed out. */
  forget(sessionId: string, standalone: LegacyStream): void;
}

interface Waiting {
  timer: ReturnType<typeof setTimeout>;
  standalone: LegacyStream;
  client?: string;
}

/**
 * Legacy GET streams whose client left, kept (logging what the client misses) until it resumes
 * with `Last-Event-ID` or the window passes. Beyond `perClient` of one client's, that client's
 * own longest-waiting goes first; beyond `capacity` in all, anyone's longest-waiting: streams
 * nobody reads never crowd out open ones, nor one client's another's.
 */
export class AwaitingStreams {
  readonly #options: AwaitingStreamsOptions;
  /** By session id, longest-waiting first. */
  readonly #waiting = new Map<string, Waiting>();
  /** The same, per client. */
  readonly #of = new Map<string, Set<string>>();

  constructor(options: AwaitingStreamsOptions) {
    this.#options = options;
  }

  /** Starts the session's stream waiting (again, if it already was). */
  add(sessionId: string, standalone: LegacyStream, client?: string): void {
    this.stop(sessionId);
    const timer = setTimeout(
      () => this.#options.forget(sessionId, standalone),
      this.#options.windowMs,
    );
    (timer as { unref?: () => void }).unref?.();
    this.#waiting.set(sessionId, { timer, standalone, client });
    if (client !== undefined) {
      const own = this.#of.get(client) ?? new Set<string>();
      this.#of.set(client, own);
      own.add(sessionId);
      if (own.size > this.#options.perClient) this.#forgetFirst(own);
    }
    if (this.#waiting.size > this.#options.capacity) this.#forgetFirst(this.#waiting.keys());
  }

  /** The session's stream no longer waits (resumed, taken over, forgotten or ended). */
  stop(sessionId: string): void {
    const entry = this.#waiting.get(sessionId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.#waiting.delete(sessionId);
    if (entry.client === undefined) return;
    const own = this.#of.get(entry.client);
    own?.delete(sessionId);
    if (own?.size === 0) this.#of.delete(entry.client);
  }

  /** Stops every wait (shutdown). */
  clear(): void {
    for (const sessionId of [...this.#waiting.keys()]) this.stop(sessionId);
  }

  /** Forgets the longest-waiting stream among `sessionIds` (in waiting order). */
  #forgetFirst(sessionIds: Iterable<string>): void {
    for (const oldest of sessionIds) {
      const entry = this.#waiting.get(oldest);
      if (entry) this.#options.forget(oldest, entry.standalone);
      return;
    }
  }
}
