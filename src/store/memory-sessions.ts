import type { EventLog, LoggedEvent, SessionRecord, SessionStore, SessionUse } from "./types.js";

interface Entry {
  record: SessionRecord;
  seen: number;
  /**
   * Owners that marked the session, true while their mark holds. An unmark sets false rather
   * than deleting: a warm session is marked and unmarked on every request, and a long-lived
   * Map or Set that churns allocates a new table every few operations, in old space.
   */
  active?: Map<string, boolean>;
}

function mark(entry: Entry, owner: string): void {
  entry.active ??= new Map();
  entry.active.set(owner, true);
}

/**
 * Each client's session ids in a Set kept in order of use, least recent first, and the most
 * recent one: a warm session used again is already last, and is not moved (see `Entry.active`).
 */
function clientOrders() {
  const byClient = new Map<string, { ids: Set<string>; newest: string | undefined }>();
  return {
    add(record: SessionRecord): void {
      if (record.client === undefined) return;
      const own = byClient.get(record.client) ?? { ids: new Set<string>(), newest: undefined };
      byClient.set(record.client, own);
      own.ids.add(record.id);
      own.newest = record.id;
    },
    remove(record: SessionRecord | undefined): void {
      const own = record?.client === undefined ? undefined : byClient.get(record.client);
      if (!own) return;
      own.ids.delete(record!.id);
      if (own.newest === record!.id) own.newest = undefined;
      if (own.ids.size === 0) byClient.delete(record!.client!);
    },
    /** Moves a session to the end of its client's order, when `client` is its own. */
    used(record: SessionRecord, client: string | undefined): void {
      if (client === undefined || client !== record.client) return;
      const own = byClient.get(client);
      if (!own || own.newest === record.id || !own.ids.delete(record.id)) return;
      own.ids.add(record.id);
      own.newest = record.id;
    },
    list: (client: string) => [...(byClient.get(client)?.ids ?? [])],
  };
}

/**
 * Puts a session's entry last in `sessions`, the most recently used, unless it is last already
 * (a warm session's next request: see `Entry.active`).
 */
function lastUse(sessions: Map<string, Entry>): (id: string, entry: Entry) => void {
  let newest: Entry | undefined;
  return (id, entry) => {
    if (newest === entry) return;
    sessions.delete(id);
    sessions.set(id, entry);
    newest = entry;
  };
}

/** Clears an owner's mark, if it made one: set false, not deleted (see `Entry.active`). */
function unmark(entry: Entry | undefined, owner: string): void {
  if (entry?.active?.has(owner)) entry.active.set(owner, false);
}

/** The owners whose marks on a session hold. */
function ownersOf(entry: Entry | undefined): string[] {
  const owners: string[] = [];
  for (const [owner, holds] of entry?.active ?? []) if (holds) owners.push(owner);
  return owners;
}

/**
 * Sessions in a Map kept in idle order: a `get` moves the session to the end, so the first
 * entries are always the longest idle; each client's sessions in a Set kept in the same order.
 * Expiry is checked on access and by an unref'd sweep, so an idle session costs no timer of its
 * own.
 */
export function memorySessions(idleMs: number): SessionStore & { sweep(): void } {
  const sessions = new Map<string, Entry>();
  const used = lastUse(sessions);
  const orders = clientOrders();
  const remove = (id: string) => {
    orders.remove(sessions.get(id)?.record);
    return sessions.delete(id);
  };
  const live = (id: string) => {
    const entry = sessions.get(id);
    return entry && entry.seen > Date.now() - idleMs ? entry : undefined;
  };
  const sweep = () => {
    const horizon = Date.now() - idleMs;
    for (const [id, entry] of sessions) {
      if (entry.seen > horizon) break;
      remove(id);
    }
  };
  /** The live session's entry, moved to the end of the idle orders; undefined when gone. */
  const use = (id: string, how: SessionUse = {}) => {
    const entry = live(id);
    if (!entry) {
      remove(id);
      return undefined;
    }
    entry.seen = Date.now();
    used(id, entry);
    orders.used(entry.record, how.client);
    if (how.activeFor !== undefined) mark(entry, how.activeFor);
    return entry;
  };
  return {
    idleMs,
    sweep,
    async create(record, maxSessions) {
      sweep();
      remove(record.id); // a record created again under its id replaces the old one everywhere
      const evicted: string[] = [];
      for (const id of sessions.keys()) {
        if (sessions.size < maxSessions) break;
        remove(id);
        evicted.push(id);
      }
      used(record.id, { record: { ...record, revision: 0 }, seen: Date.now() });
      orders.add(record);
      return evicted;
    },
    async get(id, how) {
      return use(id, how)?.record;
    },
    async update(id, patch) {
      const entry = sessions.get(id);
      if (entry) Object.assign(entry.record, patch, { revision: (entry.record.revision ?? 0) + 1 });
    },
    async touch(id, how) {
      return use(id, how)?.record.revision ?? false;
    },
    async exists(id) {
      return live(id) !== undefined;
    },
    delete: async (id) => remove(id),
    async ofClient(client) {
      const own = orders.list(client);
      for (const id of own) if (!live(id)) remove(id);
      return own.filter((id) => sessions.has(id));
    },
    async markActive(id, owner) {
      const entry = live(id);
      if (entry) mark(entry, owner);
    },
    async unmarkActive(id, owner) {
      unmark(sessions.get(id), owner);
    },
    async activeOwners(id) {
      return ownersOf(live(id));
    },
  };
}

/** Per-stream event logs, each capped at `maxEvents`. */
export function memoryEventLog(maxEvents: number): EventLog {
  const logs = new Map<string, LoggedEvent[]>();
  return {
    async append(stream, event) {
      const log = logs.get(stream) ?? [];
      logs.set(stream, log);
      log.push(event);
      if (log.length > maxEvents) log.splice(0, log.length - maxEvents);
    },
    async after(stream, lastEventId) {
      const log = logs.get(stream);
      if (!log) return undefined;
      const index = log.findIndex((event) => event.id === lastEventId);
      return index === -1 ? undefined : log.slice(index + 1);
    },
    async drop(stream) {
      logs.delete(stream);
    },
  };
}
