import type { EventLog, LoggedEvent, SessionRecord, SessionStore } from "./types.js";

/**
 * Sessions in a Map kept in idle order: a `get` moves the session to the end, so the first
 * entries are always the longest idle. Expiry is checked on access and by an unref'd sweep, so
 * an idle session costs no timer of its own.
 */
export function memorySessions(idleMs: number): SessionStore & { sweep(): void } {
  const sessions = new Map<string, { record: SessionRecord; seen: number }>();
  const sweep = () => {
    const horizon = Date.now() - idleMs;
    for (const [id, entry] of sessions) {
      if (entry.seen > horizon) break;
      sessions.delete(id);
    }
  };
  return {
    idleMs,
    sweep,
    async create(record, maxSessions) {
      sweep();
      const evicted: string[] = [];
      for (const id of sessions.keys()) {
        if (sessions.size < maxSessions) break;
        sessions.delete(id);
        evicted.push(id);
      }
      sessions.set(record.id, { record, seen: Date.now() });
      return evicted;
    },
    async get(id) {
      const entry = sessions.get(id);
      if (!entry) return undefined;
      const now = Date.now();
      sessions.delete(id);
      if (entry.seen <= now - idleMs) return undefined;
      entry.seen = now;
      sessions.set(id, entry);
      return entry.record;
    },
    async update(id, patch) {
      const entry = sessions.get(id);
      if (entry) Object.assign(entry.record, patch);
    },
    async exists(id) {
      const entry = sessions.get(id);
      return entry !== undefined && entry.seen > Date.now() - idleMs;
    },
    async delete(id) {
      return sessions.delete(id);
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
