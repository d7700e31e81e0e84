import { createHash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";

/** A connection the Redis store sends commands on: standalone, Sentinel or Cluster. */
export type RedisClient = Redis | Cluster;

/** Runs a Lua script on the slot of its keys; resolves to the script's reply. */
export type LuaScript = (
  redis: RedisClient,
  keys: string[],
  args: (string | number)[],
) => Promise<unknown>;

/**
 * A script sent by EVALSHA, and by EVAL only when Redis has forgotten it (restart, failover,
 * SCRIPT FLUSH). Not `defineCommand`, which would add commands to the caller's instance.
 */
export function luaScript(source: string): LuaScript {
  const sha = createHash("sha1").update(source).digest("hex");
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return redis.eval(source, keys.length, ...keys, ...args);
    }
  };
}

// Redis TIME, in ms: every score in the session index comes from the index's own node, so the
// clocks of the application processes never need to agree.
export const NOW_MS =
  "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)";

// KEYS: session hash, its set of active owners. ARGV: idle ms, an owner or "". Resets the TTL
// of both and adds the owner, when given, to the set: the touch of a request about to run.
const USE_SESSION = `
redis.call('PEXPIRE', KEYS[2], ARGV[1])
if ARGV[2] ~= '' then
  redis.call('SADD', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end`;

// KEYS[3..]: session indexes (all sessions, a client's) on the same node. ARGV[3]: the session's
// id. Marks it used now in each: on a standalone Redis, where every key is on one node, the
// session's touch and its indexes' go in one command.
const USED_IN_INDEXES = `
if #KEYS > 2 then
  ${NOW_MS}
  for i = 3, #KEYS do
    redis.call('ZADD', KEYS[i], 'XX', now, ARGV[3])
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
  end
end`;

/**
 * KEYS: session hash, its active owners, then indexes (see USED_IN_INDEXES). ARGV: idle ms, an
 * owner or "", the session's id. The session's fields, used (see USE_SESSION and
 * USED_IN_INDEXES); nil when it is gone, and it leaves the indexes given. Fields, not one JSON
 * string: Lua's cjson would turn `[]` into `{}` when re-encoding a record.
 */
export const getSession = luaScript(`
local fields = redis.call('HMGET', KEYS[1], 'record', 'logLevel', 'subscriptions', 'rev')
if not fields[1] then
  for i = 3, #KEYS do redis.call('ZREM', KEYS[i], ARGV[3]) end
  return nil
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
${USE_SESSION}
${USED_IN_INDEXES}
return fields`);

/**
 * KEYS and ARGV as {@link getSession}'s: the session's revision when it lives (and is now used),
 * else -1.
 */
export const touchSessionRecord = luaScript(`
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return -1 end
${USE_SESSION}
${USED_IN_INDEXES}
return tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')`);

/**
 * KEYS: session hash, its active owners. Deletes both; returns whether the session existed and
 * its client ("" when none), whose sorted set the caller leaves.
 */
export const deleteSession = luaScript(`
local client = redis.call('HGET', KEYS[1], 'client')
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
return {existed, client or ''}`);

/** KEYS: a client's sessions. ARGV: id, idle ms. Adds the session as the most recently used. */
export const admitClientSession = luaScript(`
${NOW_MS}
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/**
 * KEYS: a client's sessions. ARGV: idle ms. Forgets those idle past their expiry (their last use
 * set their score and reset their record's TTL together), and lists the rest, least recently
 * used first.
 */
export const clientSessions = luaScript(`
${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
return redis.call('ZRANGE', KEYS[1], 0, -1)`);

/**
 * KEYS: session hash. ARGV: n, then n field/value pairs to set, then fields to delete. Touches
 * only the given fields, so concurrent updates of different fields both survive, and bumps the
 * revision; never recreates a session that expired or was deleted.
 */
export const updateSession = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = tonumber(ARGV[1])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 2, 1 + 2 * n)) end
if #ARGV > 1 + 2 * n then redis.call('HDEL', KEYS[1], unpack(ARGV, 2 + 2 * n)) end
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1`);

/**
 * KEYS: session index (sorted set of ids by last use). ARGV: id, max sessions, idle ms.
 * Forgets entries idle past their expiry (stale ones included), pops the longest idle until the
 * new session fits, adds it; returns the evicted ids, whose records the caller deletes.
 */
export const admitSession = luaScript(`
${NOW_MS}
local idle = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - idle)
redis.call('ZREM', KEYS[1], ARGV[1])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[2]) + 1
local evicted = {}
if excess > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[1], excess)
  for i = 1, #popped, 2 do evicted[#evicted + 1] = popped[i] end
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], idle)
return evicted`);

/** KEYS: a session index (all, or a client's). ARGV: id, idle ms. Marks a listed session as used now. */
export const touchSession = luaScript(`
${NOW_MS}
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`);

/**
 * KEYS: a stream's log (a list of `{"id":…,"message":…}`). ARGV: the JSON prefix of the last
 * event seen. The entries after it, in order; nil when the stream or the event is unknown.
 */
export const eventsAfter = luaScript(`
local entries = redis.call('LRANGE', KEYS[1], 0, -1)
local prefix = ARGV[1]
for i = 1, #entries do
  if string.sub(entries[i], 1, #prefix) == prefix then
    local rest = {}
    for j = i + 1, #entries do rest[#rest + 1] = entries[j] end
    return rest
  end
end
return nil`);
