import type { JsonObject } from "../protocol/messages.js";
import { checkLimit, checkRetention, checkSeq } from "./feed-checks.js";
import { compareSeq, type EventFeedStore, type FeedEntry } from "./types.js";

/** One event type's feed: its entries in order, and what it remembers of those it trimmed. */
interface Feed {
  entries: FeedEntry[];
  /** The last position given out (Redis Stream's `last-generated-id`), as its two parts. */
  lastMs: number;
  lastN: number;
  /** The newest trimmed entry's position (`max-deleted-entry-id`); `0-0` until one is. */
  trimmed: string;
  /** Positions of recent appends by dedup key, with when each key is forgotten. */
  dedup: Map<string, { seq: string; until: number }>;
  /** The retention of the last append, which the sweep keeps applying while the feed is idle. */
  maxAgeMs: number;
}

/** Removes entries appended before `cutoff` and beyond `maxLen`, remembering the newest removed. */
function trim(feed: Feed, cutoff: number, maxLen: number): void {
  let drop = 0;
  while (drop < feed.entries.length && feed.entries[drop]!.at < cutoff) drop++;
  drop = Math.max(drop, feed.entries.length - maxLen);
  if (drop <= 0) return;
  feed.trimmed = feed.entries[drop - 1]!.seq;
  feed.entries.splice(0, drop);
}

/**
 * Forgets dedup keys past their time, oldest first as a Map keeps them: up to the first live
 * one, or all of them (`thorough`: a key's time follows its append's retention, which may vary).
 */
function forgetKeys(feed: Feed, now: number, thorough = false): void {
  for (const [key, seen] of feed.dedup) {
    if (seen.until > now && !thorough) return;
    if (seen.until <= now) feed.dedup.delete(key);
  }
}

/** The index of the first entry after `after` (and not before `from`, when given). */
function firstAfter(entries: FeedEntry[], after: string, from: string | undefined): number {
  const start = from !== undefined && compareSeq(from, after) > 0 ? from : after;
  const inclusive = start === from;
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = compareSeq(entries[middle]!.seq, start);
    if (order > 0 || (inclusive && order === 0)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * Feeds in this process's memory, with positions as Redis Streams give them: `<ms>-<n>`, the ms
 * never going back even when the clock does. Trimmed on append and by the store's sweep, so an
 * idle feed does not keep what its retention no longer covers.
 */
export function memoryFeeds(): EventFeedStore & { sweep(): void } {
  const feeds = new Map<string, Feed>();
  const feedOf = (name: string): Feed => {
    let feed = feeds.get(name);
    if (!feed) {
      feed = { entries: [], lastMs: 0, lastN: 0, trimmed: "0-0", dedup: new Map(), maxAgeMs: 0 };
      feeds.set(name, feed);
    }
    return feed;
  };
  const nextSeq = (feed: Feed, now: number): string => {
    if (now > feed.lastMs) [feed.lastMs, feed.lastN] = [now, 0];
    else feed.lastN++;
    return `${feed.lastMs}-${feed.lastN}`;
  };
  return {
    async append(name, value, retain, dedupKey) {
      checkRetention(retain);
      const now = Date.now();
      const feed = feedOf(name);
      forgetKeys(feed, now);
      const seen = dedupKey ? feed.dedup.get(dedupKey) : undefined;
      if (seen && seen.until > now) return { seq: seen.seq, appended: false };
      const seq = nextSeq(feed, now);
      // Stored as JSON text, so callers never share mutable objects with the store.
      const copy = JSON.parse(JSON.stringify(value)) as JsonObject;
      feed.entries.push({ seq, at: now, value: copy });
      feed.maxAgeMs = retain.maxAgeMs;
      trim(feed, now - retain.maxAgeMs, retain.maxLen);
      if (dedupKey) {
        // Deleted first, so that it moves to the end of the Map's order.
        feed.dedup.delete(dedupKey);
        feed.dedup.set(dedupKey, { seq, until: now + retain.maxAgeMs });
      }
      return { seq, appended: true };
    },

    async read(name, after, limit, notBefore) {
      checkSeq(after);
      checkLimit(limit);
      const feed = feeds.get(name);
      if (!feed) return { entries: [], head: "0-0", truncated: false };
      const head = feed.lastMs === 0 ? "0-0" : `${feed.lastMs}-${feed.lastN}`;
      const from = notBefore === undefined ? undefined : `${notBefore}-0`;
      const start = firstAfter(feed.entries, after, from);
      const examined = feed.entries.slice(start, start + limit);
      const entries = examined
        .filter((entry) => notBefore === undefined || entry.at >= notBefore)
        .map((entry) => ({ ...entry, value: JSON.parse(JSON.stringify(entry.value)) }));
      return {
        entries,
        head: examined.at(-1)?.seq ?? head,
        truncated: compareSeq(feed.trimmed, after) > 0,
      };
    },

    async head(name) {
      const feed = feeds.get(name);
      return feed && feed.lastMs > 0 ? `${feed.lastMs}-${feed.lastN}` : "0-0";
    },

    sweep() {
      const now = Date.now();
      for (const feed of feeds.values()) {
        forgetKeys(feed, now, true);
        trim(feed, now - feed.maxAgeMs, Number.POSITIVE_INFINITY);
      }
    },
  };
}
