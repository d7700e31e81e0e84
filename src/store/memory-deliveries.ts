import { compareSeq, type DeliveryJob, type DeliveryQueue } from "./types.js";

/** A queued job: its JSON, when it is next due, and whom it is owed to at which position. */
interface Queued {
  json: string;
  due: number;
  subscription: string;
  position: string | undefined;
  /** The latest claim's token. */
  claim?: string;
}

/**
 * Deliveries owed, in this process's memory: each job with the time it is next due. A claim
 * moves that time to the end of its lease, so an abandoned job comes due again by itself.
 */
export function memoryDeliveries(): DeliveryQueue {
  const queued = new Map<string, Queued>();
  /** Per subscription, the ids of its queued jobs that carry a position. */
  const owed = new Map<string, Set<string>>();
  const remove = (id: string) => {
    const job = queued.get(id);
    if (!job) return;
    queued.delete(id);
    const ids = owed.get(job.subscription);
    ids?.delete(id);
    if (ids?.size === 0) owed.delete(job.subscription);
  };
  return {
    async enqueue(jobs, dueAt) {
      for (const job of jobs) {
        if (queued.has(job.id)) continue;
        // Stored as JSON, so callers never share mutable objects with the store.
        const { subscription, position } = job;
        queued.set(job.id, { json: JSON.stringify(job), due: dueAt, subscription, position });
        if (position === undefined) continue;
        const ids = owed.get(subscription) ?? new Set<string>();
        owed.set(subscription, ids.add(job.id));
      }
    },
    async claim(limit, leaseMs) {
      const now = Date.now();
      const due = [...queued.values()].filter((job) => job.due <= now);
      due.sort((a, b) => a.due - b.due);
      const claim = crypto.randomUUID();
      return due.slice(0, Math.max(0, limit)).map((job) => {
        job.due = now + leaseMs;
        job.claim = claim;
        return { ...(JSON.parse(job.json) as DeliveryJob), claim };
      });
    },
    async complete(id, claim) {
      if (claim === undefined || queued.get(id)?.claim === claim) remove(id);
    },
    async oldestOwed(subscription) {
      let oldest: string | undefined;
      for (const id of owed.get(subscription) ?? []) {
        const position = queued.get(id)?.position;
        if (position !== undefined && (oldest === undefined || compareSeq(position, oldest) < 0))
          oldest = position;
      }
      return oldest;
    },
    async retry(job, dueAt) {
      const current = queued.get(job.id);
      if (!current || (job.claim !== undefined && current.claim !== job.claim)) return;
      current.json = JSON.stringify(job);
      current.due = dueAt;
    },
    async nextDue() {
      let earliest: number | undefined;
      for (const { due } of queued.values())
        if (earliest === undefined || due < earliest) earliest = due;
      return earliest;
    },
  };
}
