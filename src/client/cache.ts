import { isObject, type JsonObject } from "../protocol/messages.js";
import type { Notification } from "./types.js";

interface Entry {
  value: unknown;
  expires: number;
}

/** Which cached methods a change notification makes stale. */
const STALE_BY: Record<string, readonly string[]> = {
  "notifications/tools/list_changed": ["tools/list"],
  "notifications/prompts/list_changed": ["prompts/list"],
  "notifications/resources/list_changed": ["resources/list", "resources/templates/list"],
};

/**
 * List and read results kept for their `ttlMs` (spec: CacheableResult). One cache per client,
 * so `private` and `public` results are kept alike: a client is one authorization context.
 */
export class ResultCache {
  private readonly entries = new Map<string, Entry>();

  /** The fresh value under `key`, if any. */
  get(key: string): unknown {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires > Date.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Keeps `value` for `ttlMs`; a zero, missing or invalid ttl keeps nothing. */
  set(key: string, value: unknown, ttlMs: unknown): void {
    if (typeof ttlMs !== "number" || !(ttlMs > 0)) return;
    this.entries.set(key, { value, expires: Date.now() + ttlMs });
  }

  /** Drops what a change notification makes stale. */
  invalidate(notification: Notification): void {
    if (notification.method === "notifications/resources/updated") {
      const uri = isObject(notification.params) ? notification.params.uri : undefined;
      this.entries.delete(`resources/read ${String(uri)}`);
      return;
    }
    for (const method of STALE_BY[notification.method] ?? []) this.entries.delete(method);
  }

  /** Drops everything. */
  clear(): void {
    this.entries.clear();
  }
}

/** The smallest `ttlMs` of several pages, so an aggregate is never kept longer than a page. */
export function minTtl(results: readonly JsonObject[]): number | undefined {
  let ttl: number | undefined;
  for (const result of results) {
    if (typeof result.ttlMs !== "number") return undefined;
    ttl = ttl === undefined ? result.ttlMs : Math.min(ttl, result.ttlMs);
  }
  return ttl;
}
