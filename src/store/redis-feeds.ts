import type { JsonObject } from "../protocol/messages.js";
import { checkLimit, checkRetention, checkSeq } from "./feed-checks.js";
import type { Keys } from "./redis-keys.js";
import type { ReplicaWait } from "./redis-replicas.js";
import { luaScript, NOW_MS, type RedisClient } from "./redis-scripts.js";
import { compareSeq, type EventFeedStore, type FeedEntry } from "./types.js";

/** Lua: whether Stream id `a` comes before `b` (ids compared as two numbers, not as text). */
const BEFORE = `
local function parts(id)
  local ms, n = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(n)
end
local function before(a, b)
  local am, an = parts(a)
  local bm, bn = parts(b)
  return am < bm or (am == bm and an < bn)
end`;

/**
 * KEYS: the feed (a Stream), the newest position trimmed from it, and optionally a dedup key.
 * ARGV: the value's JSON, max length, max age in ms. Returns the new entry's id and 1, or the id
 * the dedup key holds and 0. The trim is exact (`=`, not `~`): the feed promises at most `maxLen`
 * entries, and which entries are gone must be known to tell readers they were. Redis 7.0 does
 * not count trimmed entries in `XINFO STREAM`'s `max-deleted-entry-id` (only XDEL's), so the
 * script finds the newest entry each trim will remove before trimming, and keeps its id.
 * Trimming from the front one or two entries per append costs O(log n) per append.
 */
const appendEntry = luaScript(`
${NOW_MS}
${BEFORE}
if KEYS[3] then
  local seen = redis.call('GET', KEYS[3])
  if seen then return {seen, 0} end
end
local id = redis.call('XADD', KEYS[1], '*', 'at', now, 'v', ARGV[1])
local newest = nil
local excess = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[2])
if excess > 0 then
  local gone = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', excess)
  newest = gone[#gone][1]
end
local minid = now - tonumber(ARGV[3])
if minid > 0 then
  local old = redis.call('XREVRANGE', KEYS[1], '(' .. minid .. '-0', '-', 'COUNT', 1)
  if #old > 0 and (not newest or before(newest, old[1][1])) then newest = old[1][1] end
end
if newest then
  redis.call('XTRIM', KEYS[1], 'MAXLEN', '=', ARGV[2])
  if minid > 0 then redis.call('XTRIM', KEYS[1], 'MINID', '=', minid) end
  redis.call('SET', KEYS[2], newest)
end
if KEYS[3] then redis.call('SET', KEYS[3], id, 'PX', ARGV[3]) end
return {id, 1}`);

/**
 * KEYS: the feed, its newest trimmed position. ARGV: position to read after, count, and the
 * earliest append time wanted ('' for any). Returns the head, the newest trimmed position and
 * the entries, read in one go so that no trim falls between them. An id's ms is never below its
 * entry's `at` (both from the Redis clock, the id never going back), so entries appended before
 * `notBefore` all lie before `<notBefore>-0`: the read starts there instead of skipping them.
 */
const readEntries = luaScript(`
${BEFORE}
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local head = '0-0'
if #last > 0 then head = last[1][1] end
local start = '(' .. ARGV[1]
if ARGV[3] ~= '' and before(ARGV[1], ARGV[3] .. '-0') then start = ARGV[3] .. '-0' end
local entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', ARGV[2])
return {head, redis.call('GET', KEYS[2]) or '0-0', entries}`);

/** A Stream entry as Redis replies it: its id, then its fields and values in turn. */
type StreamEntry = [string, string[]];

function toEntry([seq, fields]: StreamEntry): FeedEntry {
  const field = (name: string) => fields[fields.indexOf(name) + 1] ?? "";
  return { seq, at: Number(field("at")), value: JSON.parse(field("v")) as JsonObject };
}

/** What the feed store needs of the Redis store. */
export interface RedisFeedsOptions {
  redis: RedisClient;
  keys: Keys;
  /** Run after an append (when the store waits for replicas). */
  replicated: ReplicaWait;
  /** Rewrites a rejection so that it names the store operation. */
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/**
 * Feeds in Redis Streams, one per event type under its own hash tag, positions being the
 * Stream's ids. The Redis clock stamps every entry (id and `at`) and drives trimming by age,
 * so processes' clocks need not agree; `notBefore` is compared with it too. A feed key has no
 * TTL: trimming keeps it at most `maxLen` entries.
 */
export function redisFeeds(options: RedisFeedsOptions): EventFeedStore {
  const { redis, keys, replicated, labelled } = options;
  return {
    append: (name, value, retain, dedupKey) =>
      labelled("feeds.append", async () => {
        checkRetention(retain);
        const scriptKeys = [keys.feed(name), keys.feedTrimmed(name)];
        if (dedupKey) scriptKeys.push(keys.feedDedup(name, dedupKey));
        const args = [JSON.stringify(value), retain.maxLen, retain.maxAgeMs];
        const [seq, appended] = (await appendEntry(redis, scriptKeys, args)) as [string, number];
        await replicated(scriptKeys[0]!);
        return { seq: String(seq), appended: appended === 1 };
      }),

    read: (name, after, limit, notBefore) =>
      labelled("feeds.read", async () => {
        checkSeq(after);
        checkLimit(limit);
        const from = notBefore === undefined ? "" : String(Math.max(0, Math.ceil(notBefore)));
        const [head, trimmed, raw] = (await readEntries(
          redis,
          [keys.feed(name), keys.feedTrimmed(name)],
          [after, limit, from],
        )) as [string, string, StreamEntry[]];
        const examined = raw.map(toEntry);
        return {
          entries: examined.filter((entry) => notBefore === undefined || entry.at >= notBefore),
          head: examined.at(-1)?.seq ?? head,
          truncated: compareSeq(trimmed, after) > 0,
        };
      }),

    head: (name) =>
      labelled("feeds.head", async () => {
        const [last] = (await redis.xrevrange(keys.feed(name), "+", "-", "COUNT", 1)) as [
          string,
          string[],
        ][];
        return last?.[0] ?? "0-0";
      }),
  };
}
