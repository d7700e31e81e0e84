/** Clients whose sessions are counted at most (the quietest are forgotten first). */
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * Which legacy sessions each client opened through this process, oldest first, so that one
 * client beyond its cap loses its own oldest sessions, never another client's. Counted per
 * process: on N processes a client holds at most N times the cap.
 */
export class SessionQuota {
  readonly #max: number;
  readonly #of = new Map<string, string[]>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Records a new session of `client`; returns those of its sessions to end now. */
  add(client: string, sessionId: string): string[] {
    const own = this.#of.get(client) ?? [];
    // Most recently active clients last: the map forgets the longest quiet ones first.
    this.#of.delete(client);
    this.#of.set(client, own);
    own.push(sessionId);
    if (this.#of.size > MAX_TRACKED_CLIENTS) this.#of.delete(this.#of.keys().next().value!);
    return own.length > this.#max ? own.splice(0, own.length - this.#max) : [];
  }
}
