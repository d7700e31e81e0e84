import type { WebhookRecord, WebhookStore } from "./types.js";

/** A stored subscription: its JSON, and when it lapses (Infinity for never). */
interface Stored {
  json: string;
  version: number;
  expires: number;
}

/**
 * Webhook subscriptions in this process's memory, by event type. A lapsed one is removed when
 * next touched and by the store's sweep; an event type with none left is forgotten.
 */
export function memoryWebhooks(): WebhookStore & { sweep(): void } {
  const byEvent = new Map<string, Map<string, Stored>>();
  /** The event type's live subscriptions, lapsed ones removed. */
  const liveOf = (name: string): Map<string, Stored> | undefined => {
    const hooks = byEvent.get(name);
    if (!hooks) return undefined;
    const now = Date.now();
    for (const [id, stored] of hooks) if (stored.expires <= now) hooks.delete(id);
    if (hooks.size > 0) return hooks;
    byEvent.delete(name);
    return undefined;
  };
  /** One subscription if it is live; a lapsed one is removed. */
  const liveOne = (name: string, id: string): Stored | undefined => {
    const stored = byEvent.get(name)?.get(id);
    if (!stored || stored.expires > Date.now()) return stored;
    byEvent.get(name)?.delete(id);
    return undefined;
  };
  return {
    async put(record, expectedVersion) {
      const current = liveOne(record.name, record.id);
      if (expectedVersion === 0 ? current : current?.version !== expectedVersion) return false;
      const expires = record.expiresAt ?? Number.POSITIVE_INFINITY;
      if (expires <= Date.now()) {
        byEvent.get(record.name)?.delete(record.id);
        return true;
      }
      const hooks = byEvent.get(record.name) ?? new Map<string, Stored>();
      byEvent.set(record.name, hooks);
      // Stored as JSON, so callers never share mutable objects with the store.
      hooks.set(record.id, { json: JSON.stringify(record), version: record.version, expires });
      return true;
    },
    async get(name, id) {
      const stored = liveOne(name, id);
      return stored ? (JSON.parse(stored.json) as WebhookRecord) : undefined;
    },
    async delete(name, id) {
      const existed = liveOne(name, id) !== undefined && byEvent.get(name)!.delete(id);
      liveOf(name);
      return existed;
    },
    async ofEvent(name) {
      const hooks = liveOf(name);
      return hooks ? [...hooks.values()].map(({ json }) => JSON.parse(json) as WebhookRecord) : [];
    },
    sweep() {
      for (const name of [...byEvent.keys()]) liveOf(name);
    },
  };
}
