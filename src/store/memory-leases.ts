import type { LeaseStore } from "./types.js";

/**
 * Leases in a Map of owner and expiry: expiry is checked on access and by the store's unref'd
 * sweep, so a lease costs no timer of its own.
 */
export function memoryLeases(): LeaseStore & { sweep(): void } {
  const leases = new Map<string, { owner: string; until: number }>();
  const live = (key: string) => {
    const lease = leases.get(key);
    if (lease && lease.until > Date.now()) return lease;
    leases.delete(key);
    return undefined;
  };
  return {
    sweep() {
      const now = Date.now();
      for (const [key, lease] of leases) if (lease.until <= now) leases.delete(key);
    },
    async acquire(key, owner, ttlMs) {
      const lease = live(key);
      if (lease && lease.owner !== owner) return false;
      leases.set(key, { owner, until: Date.now() + ttlMs });
      return true;
    },
    async renew(key, owner, ttlMs) {
      const lease = live(key);
      if (lease?.owner !== owner) return false;
      lease.until = Date.now() + ttlMs;
      return true;
    },
    async release(key, owner) {
      if (live(key)?.owner !== owner) return false;
      return leases.delete(key);
    },
    async holder(key) {
      return live(key)?.owner;
    },
  };
}
