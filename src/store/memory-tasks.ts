import type { TaskRecord, TaskStore } from "./types.js";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Tasks in this process's memory, each dropped once its TTL has passed. */
export function memoryTasks(): TaskStore & { sweep(): void } {
  const tasks = new Map<string, { record: string; expires: number }>();
  const live = (id: string) => {
    const entry = tasks.get(id);
    if (entry && entry.expires <= Date.now()) tasks.delete(id);
    return entry && entry.expires > Date.now() ? entry : undefined;
  };
  const unfinished = (quota: string) => {
    let count = 0;
    for (const [id] of tasks) {
      const entry = live(id);
      if (!entry) continue;
      const record = JSON.parse(entry.record) as TaskRecord;
      if ((record.quota ?? record.principal) === quota && !TERMINAL.has(record.status)) count++;
    }
    return count;
  };
  return {
    async create(record, maxActive) {
      if (unfinished(record.quota ?? record.principal) >= maxActive) return false;
      // Stored as JSON, so callers never share mutable objects with the store.
      tasks.set(record.id, {
        record: JSON.stringify(record),
        expires: record.createdAt + record.ttlMs,
      });
      return true;
    },
    async get(id) {
      const entry = live(id);
      return entry ? (JSON.parse(entry.record) as TaskRecord) : undefined;
    },
    async replace(record, expectedVersion) {
      const entry = live(record.id);
      if (!entry || (JSON.parse(entry.record) as TaskRecord).version !== expectedVersion)
        return false;
      entry.record = JSON.stringify(record);
      return true;
    },
    sweep() {
      for (const [id] of tasks) live(id);
    },
  };
}
