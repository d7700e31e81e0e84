import { publish, subscribe } from "../../store/channels.js";
import { readAtOnce } from "../../store/read-at-once.js";
import type { EventBus, SessionRecord, SessionStore, SessionUse } from "../../store/types.js";
import { LegacyChannels } from "./channels.js";

/** Longest time a record is served from memory; a quarter of the idle timeout when shorter. */
const MAX_FRESH_MS = 5_000;

/**
 * Session records of recent requests, kept in this process when the store is shared (Redis), so
 * that a request on a warm session costs one cheap store command (`touch`: the session still
 * lives, its idle clock reset) instead of reading and parsing its record. Any change (log level,
 * subscriptions, delete, eviction) is announced on the bus and drops the entry everywhere;
 * entries also go stale after a short time, and the next request then reads the store whole,
 * which refreshes the session's place in the idle order (so it is kept to within that time).
 */
export class SessionCache {
  readonly #store: SessionStore;
  readonly #bus: EventBus;
  readonly #entries = new Map<string, { record: SessionRecord; fetched: number; epoch: number }>();
  readonly #freshMs: number;
  readonly #max: number;
  readonly #unsubscribe: Promise<() => Promise<void>>;
  readonly #sweeper: ReturnType<typeof setInterval>;
  #listening = false;

  constructor(store: SessionStore, bus: EventBus, max: number, onError: (error: unknown) => void) {
    this.#store = store;
    this.#bus = bus;
    this.#max = max;
    this.#freshMs = Math.min(MAX_FRESH_MS, store.idleMs / 4);
    this.#sweeper = setInterval(() => this.#forgetStale(performance.now()), this.#freshMs);
    (this.#sweeper as { unref?: () => void }).unref?.();
    this.#unsubscribe = subscribe(bus, LegacyChannels.sessionRecords, (id) =>
      this.#entries.delete(id),
    );
    this.#unsubscribe.then(
      () => {
        this.#listening = true;
      },
      (error: unknown) => onError(error),
    );
  }

  /**
   * The session, from memory when fresh, else from the store (undefined when gone). `keep`
   * false reads without caching: a notification alone does not make a session warm. `use` goes
   * with the read or the touch, in the same round trip.
   */
  get(
    id: string,
    keep = true,
    use?: SessionUse,
  ): SessionRecord | undefined | Promise<SessionRecord | undefined> {
    if (this.#bus.epoch) return this.#getShared(id, keep, use);
    // An in-process bus means an in-process store: reading it costs no round trip, and where
    // the store's own `get` is in place, no async step either.
    const store = this.#store;
    const now = readAtOnce(store.get);
    return now ? now(id, use) : store.get(id, use);
  }

  async #getShared(
    id: string,
    keep: boolean,
    use: SessionUse | undefined,
  ): Promise<SessionRecord | undefined> {
    const now = performance.now();
    this.#forgetStale(now);
    const entry = this.#entries.get(id);
    // Another process's change is heard only through the bus: trust entries of this epoch only.
    const epoch = this.#listening ? (this.#bus.epoch?.() ?? -1) : -1;
    if (entry && epoch >= 0 && entry.epoch === epoch && now - entry.fetched < this.#freshMs) {
      // Neither its life nor its contents are taken on trust: a session ended or changed on
      // another process (its log level, its subscriptions) is seen here at once, though that
      // process's message may still be on its way (on a Redis Cluster it often is).
      const revision = await this.#store.touch(id, use);
      if (revision === false) {
        this.#entries.delete(id);
        return undefined;
      }
      if (revision === (entry.record.revision ?? 0)) return entry.record;
    }
    const record = await this.#store.get(id, use);
    this.#entries.delete(id);
    if (!record) return undefined;
    if (keep && epoch >= 0) this.#entries.set(id, { record, fetched: now, epoch });
    // Map order is insertion order: the first entries are the least recently fetched.
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    return record;
  }

  /** Drops entries past their time, oldest first, so idle sessions cost no memory here. */
  #forgetStale(now: number): void {
    for (const [id, entry] of this.#entries) {
      if (now - entry.fetched < this.#freshMs) break;
      this.#entries.delete(id);
    }
  }

  /** Announces that sessions changed or ended, so every process reads them again. */
  async changed(...ids: string[]): Promise<void> {
    for (const id of ids) {
      this.#entries.delete(id);
      await publish(this.#bus, LegacyChannels.sessionRecords, id);
    }
  }

  /** Stops listening for changes. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#entries.clear();
    await (await this.#unsubscribe.catch(() => async () => {}))();
  }
}
