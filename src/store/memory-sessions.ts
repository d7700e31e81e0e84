import { type Link, LinkedList } from "../utils/linked-list.js";
import { answersAtOnce } from "./read-at-once.js";
import type { EventLog, LoggedEvent, SessionRecord, SessionStore, SessionUse } from "./types.js";

interface Entry {
  record: SessionRecord;
  seen: number;
  /** Its place in the idle order. */
  idle: Link<string>;
  /** Its place in its client's order, when it has a client. */
  own?: Link<string>;
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
 * Two orders of use kept as linked lists, least recent first: all sessions (the idle order, so
 * the first are always the longest idle) and each client's. A use moves the session's links to
 * the ends, which allocates nothing: moving a Map's entry (delete, then set) on every request gave
 * a long-lived Map a new table every few requests, in old space.
 */
function ordersOfUse() {
  const idle = new LinkedList<string>();
  const byClient = new Map<string, LinkedList<string>>();
  return {
    /** The longest idle session's link: walk on by `next`, read before a removal. */
    oldest: () => idle.first,
    /** A new session's places, last in both orders. */
    add(record: SessionRecord): Pick<Entry, "idle" | "own"> {
      const places: Pick<Entry, "idle" | "own"> = { idle: idle.add(record.id) };
      if (record.client !== undefined) {
        const own = byClient.get(record.client) ?? new LinkedList<string>();
        byClient.set(record.client, own);
        places.own = own.add(record.id);
      }
      return places;
    },
    remove(entry: Entry): void {
      idle.remove(entry.idle);
      // A link knows its list: the client's order needs no lookup.
      const own = entry.own?.list;
      if (!own) return;
      own.remove(entry.own!);
      if (own.size === 0) byClient.delete(entry.record.client!);
    },
    /** A use: last in the idle order, and in its client's when `client` is its own. */
    used(entry: Entry, client: string | undefined): void {
      idle.moveToEnd(entry.idle);
      if (entry.own && client === entry.record.client) entry.own.list.moveToEnd(entry.own);
    },
    ofClient: (client: string) => byClient.get(client)?.values() ?? [],
  };
}

/**
 * Sessions by id, in their orders of use (see {@link ordersOfUse}). Expiry is checked on access and
 * by an unref'd sweep, so an idle session costs no timer of its own.
 */
export function memorySessions(idleMs: number): SessionStore & { sweep(): void } {
  const sessions = new Map<string, Entry>();
  const orders = ordersOfUse();
  const remove = (id: string) => {
    const entry = sessions.get(id);
    if (entry) orders.remove(entry);
    return sessions.delete(id);
  };
  const live = (id: string, entry = sessions.get(id)) =>
    entry && entry.seen > Date.now() - idleMs ? entry : undefined;
  /** Removes the longest idle sessions while `more` says so; returns their ids. */
  const removeOldest = (more: (entry: Entry) => boolean) => {
    const removed: string[] = [];
    for (let link = orders.oldest(), next: typeof link; link; link = next) {
      next = link.next;
      if (!more(sessions.get(link.value)!)) break;
      remove(link.value);
      removed.push(link.value);
    }
    return removed;
  };
  const sweep = () => {
    const horizon = Date.now() - idleMs;
    removeOldest((entry) => entry.seen <= horizon);
  };
  /** The live session's entry, moved to the end of the orders of use; undefined when gone. */
  const use = (id: string, how: SessionUse = {}) => {
    const entry = live(id);
    if (!entry) {
      remove(id);
      return undefined;
    }
    entry.seen = Date.now();
    orders.used(entry, how.client);
    if (how.activeFor !== undefined) mark(entry, how.activeFor);
    return entry;
  };
  const read = (id: string, how?: SessionUse) => use(id, how)?.record;
  const get = async (id: string, how?: SessionUse) => read(id, how);
  answersAtOnce(get, read); // a warm legacy request's read takes no async step
  return {
    idleMs,
    sweep,
    async create(record, maxSessions) {
      sweep();
      remove(record.id); // a record created again under its id replaces the old one everywhere
      const evicted = removeOldest(() => sessions.size >= maxSessions);
      const stored = { ...record, revision: 0 };
      sessions.set(record.id, { record: stored, seen: Date.now(), ...orders.add(stored) });
      return evicted;
    },
    get,
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
      const own = orders.ofClient(client);
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
