import { memoryDeliveries } from "./memory-deliveries.js";
import { memoryFeeds } from "./memory-feeds.js";
import { memoryLeases } from "./memory-leases.js";
import { memoryRateLimiters } from "./memory-rate-limiter.js";
import { memoryEventLog, memorySessions } from "./memory-sessions.js";
import { memoryTasks } from "./memory-tasks.js";
import { memoryWebhooks } from "./memory-webhooks.js";
import type { BusMessage, EventBus, McpStore, NonceStore } from "./types.js";

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** Most nonces remembered at once; the oldest are forgotten first. @default 100_000 */
  maxNonces?: number;
  /** Idle time after which a legacy session expires. @default 1_800_000 (30 min) */
  sessionIdleMs?: number;
  /** Events kept per SSE stream for replay. @default 1_000 */
  maxEventsPerStream?: number;
}

function memoryNonces(maxNonces: number): NonceStore {
  const seen = new Map<string, number>();
  return {
    async claim(key, ttlMs) {
      const now = Date.now();
      const expires = seen.get(key);
      if (expires !== undefined && expires > now) return false;
      seen.delete(key);
      seen.set(key, now + ttlMs);
      // Map keeps insertion order, so the first entries are the oldest claims.
      for (const [oldKey, oldExpiry] of seen) {
        if (seen.size <= maxNonces && oldExpiry > now) break;
        seen.delete(oldKey);
      }
      return true;
    },
  };
}

/** A sharded channel's identity, as the Redis bus names it: apart from an un-sharded namesake. */
function channelKey(channel: string, shard: string | undefined): string {
  return shard === undefined ? channel : `{s:${shard}}:${channel}`;
}

function memoryBus(): EventBus {
  const channels = new Map<string, Set<(message: BusMessage) => void>>();
  return {
    async publish(name, message, shard) {
      const listeners = channels.get(channelKey(name, shard));
      for (const listener of listeners ?? []) {
        try {
          listener(message);
        } catch {
          // one failing subscriber must not starve the others
        }
      }
      // One store stands for one process: it counts once, however many listeners it has.
      return listeners && listeners.size > 0 ? 1 : 0;
    },
    async subscribe(name, listener, shard) {
      const channel = channelKey(name, shard);
      const listeners = channels.get(channel) ?? new Set();
      channels.set(channel, listeners);
      listeners.add(listener);
      return async () => {
        listeners.delete(listener);
        if (listeners.size === 0) channels.delete(channel);
      };
    },
  };
}

/**
 * The in-process store: one process only, nothing survives a restart.
 *
 * @example
 * ```ts
 * import { createMcpHandler, memoryStore } from "mcp-mount";
 *
 * const mcp = createMcpHandler(server, { store: memoryStore({ sessionIdleMs: 10 * 60_000 }) });
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): McpStore {
  const sessions = memorySessions(options.sessionIdleMs ?? 30 * 60_000);
  const tasks = memoryTasks();
  const leases = memoryLeases();
  const feeds = memoryFeeds();
  const webhooks = memoryWebhooks();
  const sweeper = setInterval(() => {
    sessions.sweep();
    tasks.sweep();
    leases.sweep();
    feeds.sweep();
    webhooks.sweep();
  }, 60_000);
  (sweeper as { unref?: () => void }).unref?.();
  return {
    nonces: memoryNonces(options.maxNonces ?? 100_000),
    bus: memoryBus(),
    sessions,
    events: memoryEventLog(options.maxEventsPerStream ?? 1_000),
    tasks,
    leases,
    feeds,
    webhooks,
    deliveries: memoryDeliveries(),
    async ping() {},
    rateLimiter: memoryRateLimiters(),
    async close() {
      clearInterval(sweeper);
    },
  };
}
