import type { JsonObject } from "../protocol/messages.js";
import type { Notification } from "./types.js";

/** How long and for whom a result may be kept (spec: CacheableResult). */
export interface CacheHints {
  ttlMs: number;
  cacheScope: "public" | "private";
}

/** Where a client's entries live in a cache: its server, and its authorization context. */
export interface CacheSlot {
  /** The server: the HTTP endpoint, or a key of the client's own for other transports. */
  endpoint: string;
  /** The authorization context `private` results are kept for. */
  context: string;
}

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

/** Most entries a cache holds; the oldest go first. */
const MAX_ENTRIES = 5_000;

/**
 * List and read results kept for their `ttlMs`. Each client has one; pass one to several
 * clients (`cache` option) to share it: `public` results are then reused by every client of
 * the same server, `private` ones only within the same `cacheContext` (spec: cacheScope).
 *
 * @example
 * ```ts
 * import { McpClient, ResultCache } from "mcp-mount/client";
 * const cache = new ResultCache();
 * const url = "http://localhost:3000/mcp";
 * const alice = await McpClient.connect(url, { cache, cacheContext: "alice" });
 * const bob = await McpClient.connect(url, { cache, cacheContext: "bob" });
 * ```
 */
export class ResultCache {
  private readonly entries = new Map<string, Entry>();

  /** The fresh value of `key` for this slot: a public entry, or the slot's private one. */
  get(slot: CacheSlot, key: string): unknown {
    for (const scoped of [
      `${slot.endpoint}\n*\n${key}`,
      `${slot.endpoint}\n${slot.context}\n${key}`,
    ]) {
      const entry = this.entries.get(scoped);
      if (!entry) continue;
      if (entry.expires > Date.now()) return entry.value;
      this.entries.delete(scoped);
    }
    return undefined;
  }

  /** Keeps `value` as its hints allow; a zero or missing ttl keeps nothing. */
  set(slot: CacheSlot, key: string, value: unknown, hints: CacheHints | undefined): void {
    if (!hints || !(hints.ttlMs > 0)) return;
    const scope = hints.cacheScope === "public" ? "*" : slot.context;
    const scoped = `${slot.endpoint}\n${scope}\n${key}`;
    this.entries.delete(scoped);
    this.entries.set(scoped, { value, expires: Date.now() + hints.ttlMs });
    if (this.entries.size > MAX_ENTRIES) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  /** Drops what a change notification from `endpoint` makes stale, for every context. */
  invalidate(endpoint: string, notification: Notification): void {
    const stale =
      notification.method === "notifications/resources/updated"
        ? [`resources/read ${String(notification.params?.uri)}`]
        : (STALE_BY[notification.method] ?? []);
    if (stale.length === 0) return;
    for (const scoped of [...this.entries.keys()]) {
      const [at, , key] = scoped.split("\n");
      if (at === endpoint && stale.includes(key!)) this.entries.delete(scoped);
    }
  }
}

/** The hints of several pages together: the shortest ttl, private if any page is. */
export function cacheHintsOf(results: readonly JsonObject[]): CacheHints | undefined {
  let hints: CacheHints | undefined;
  for (const result of results) {
    if (typeof result.ttlMs !== "number") return undefined;
    const scope = result.cacheScope === "public" ? "public" : "private";
    hints = {
      ttlMs: hints ? Math.min(hints.ttlMs, result.ttlMs) : result.ttlMs,
      cacheScope: hints?.cacheScope === "private" ? "private" : scope,
    };
  }
  return hints;
}

/** Reads a result's cache hints, if it has them. */
export function hintsOf(result: JsonObject): CacheHints | undefined {
  return cacheHintsOf([result]);
}
