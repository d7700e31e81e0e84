import type { SessionStore } from "../../store/types.js";
import type { Presence } from "./presence.js";

/** What the per-client cap needs of the legacy sessions. */
export interface SessionQuotaOptions {
  sessions: SessionStore;
  /** `maxSessionsPerClient`. */
  max: number;
  /** Whether a process marking a session active is still alive. */
  presence: Presence;
  /** Ends a session everywhere (store record, held state, later requests 404). */
  end: (sessionId: string) => Promise<unknown>;
}

/**
 * Each client's cap of sessions, counted in the store (one figure for every process sharing
 * it). Room for a new session is made by ending the client's least recently used sessions,
 * never one marked active by a live process (a stream open, a request running there); when
 * every session beyond the cap is active, the new one is refused instead.
 */
export class SessionQuota {
  readonly #options: SessionQuotaOptions;

  constructor(options: SessionQuotaOptions) {
    this.#options = options;
  }

  /**
   * Ends enough of `client`'s idle sessions, least recently used first, for one more to fit;
   * false (nothing ended) when too many of them are active.
   */
  async makeRoom(client: string): Promise<boolean> {
    const { sessions, max, end } = this.#options;
    const own = await sessions.ofClient(client);
    const excess = own.length + 1 - max;
    if (excess <= 0) return true;
    const idle: string[] = [];
    const alive = new Map<string, Promise<boolean>>();
    for (const id of own) {
      if (!(await this.#active(id, alive))) idle.push(id);
      if (idle.length === excess) break;
    }
    if (idle.length < excess) return false;
    await Promise.all(idle.map(end));
    return true;
  }

  /** True when a live process marks the session active; `alive` remembers whom it asked. */
  async #active(sessionId: string, alive: Map<string, Promise<boolean>>): Promise<boolean> {
    const { sessions, presence } = this.#options;
    for (const owner of await sessions.activeOwners(sessionId)) {
      const present = alive.get(owner) ?? presence.isPresent(owner);
      alive.set(owner, present);
      if (await present) return true;
    }
    return false;
  }
}
