import type { Keys } from "./redis-keys.js";
import type { ReplicaWait } from "./redis-replicas.js";
import {
  admitClientSession,
  admitSession,
  clientSessions,
  deleteSession,
  getSession,
  luaScript,
  type RedisClient,
  touchSession,
  touchSessionRecord,
  updateSession,
} from "./redis-scripts.js";
import { type Unmarks, unmarks } from "./redis-unmarks.js";
import type { SessionRecord, SessionStore, SessionUse } from "./types.js";

/** KEYS: session hash. ARGV: idle ms, then field/value pairs. Replaces the record whole. */
const writeSession = luaScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`);

/** KEYS: session hash, its active owners. ARGV: idle ms, owner. Marks a live session only. */
const markSession = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1`);

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** What the session store needs of the Redis store. */
export interface RedisSessionsOptions {
  redis: RedisClient;
  keys: Keys;
  idleMs: number;
  /** Run after a session's creation and deletion. */
  replicated: ReplicaWait;
  /** Rewrites a rejection so that it names the store operation. */
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/**
 * A session's keys and its script's arguments, and what its use records (see
 * {@link SessionUse}) in `indexes` and its client's: on a standalone Redis, in the session's own
 * script (one command); on a Cluster, where the indexes live in other slots, each by its own
 * script sent at once (`elsewhere`, one round trip all the same).
 */
function sessionUse(
  { redis, keys, idleMs }: RedisSessionsOptions,
  queued: Unmarks,
  id: string,
  use: SessionUse = {},
  indexes: string[] = [],
) {
  if (use.client !== undefined) indexes.push(keys.clientSessions(use.client));
  // Marked again before its unmark went out: the mark stays.
  if (use.activeFor !== undefined) queued.marking(keys.active(id), use.activeFor);
  const sessionKeys = [keys.session(id), keys.active(id)];
  const args = [idleMs, use.activeFor ?? "", id];
  if (!redis.isCluster) return { sessionKeys: [...sessionKeys, ...indexes], args, elsewhere: [] };
  const elsewhere = indexes.map((index) => touchSession(redis, [index], [id, idleMs]));
  return { sessionKeys, args, elsewhere };
}

/** Deletes a record, its marks and its place among its client's; true when it existed. */
async function removeSession(options: RedisSessionsOptions, id: string): Promise<boolean> {
  const { redis, keys, replicated } = options;
  const key = keys.session(id);
  const [existed, client] = (await deleteSession(redis, [key, keys.active(id)], [])) as [
    number,
    string,
  ];
  await Promise.all([
    replicated(key),
    client === "" ? undefined : redis.zrem(keys.clientSessions(client), id),
  ]);
  return existed === 1;
}

/** Each client's sessions, and the marks of the owners a session is active for. */
function clientsAndMarks(
  options: RedisSessionsOptions,
  queued: Unmarks,
): Pick<SessionStore, "ofClient" | "markActive" | "unmarkActive" | "activeOwners"> {
  const { redis, keys, idleMs, labelled } = options;
  return {
    ofClient: (client) =>
      labelled("sessions.ofClient", async () => {
        const ids = await clientSessions(redis, [keys.clientSessions(client)], [idleMs]);
        return isStringArray(ids) ? ids : [];
      }),
    markActive: (id, owner) =>
      labelled("sessions.markActive", async () => {
        queued.marking(keys.active(id), owner);
        await markSession(redis, [keys.session(id), keys.active(id)], [idleMs, owner]);
      }),
    unmarkActive: (id, owner) =>
      labelled("sessions.unmarkActive", () => queued.unmark(keys.active(id), owner)),
    activeOwners: (id) =>
      labelled("sessions.activeOwners", () => {
        // This process's own unmarks first, on the same connection: the read sees them.
        queued.flush();
        return redis.smembers(keys.active(id));
      }),
  };
}

/** The arguments of `updateSession` for a patch; undefined when it changes nothing. */
function updateArgs(
  patch: Partial<Pick<SessionRecord, "logLevel" | "subscriptions">>,
): (string | number)[] | undefined {
  const set: string[] = [];
  const unset: string[] = [];
  if ("logLevel" in patch) {
    if (patch.logLevel === undefined) unset.push("logLevel");
    else set.push("logLevel", patch.logLevel);
  }
  if ("subscriptions" in patch)
    set.push("subscriptions", JSON.stringify(patch.subscriptions ?? []));
  return set.length + unset.length === 0 ? undefined : [set.length / 2, ...set, ...unset];
}

/** What getSession reads: the fixed fields' JSON, the log level, subscriptions, revision. */
type SessionFields = [string, string | null, string | null, string | null];

function recordOf([fixed, logLevel, subscriptions, revision]: SessionFields): SessionRecord {
  const record: SessionRecord = {
    ...JSON.parse(fixed),
    subscriptions: subscriptions ? JSON.parse(subscriptions) : [],
    revision: Number(revision ?? 0),
  };
  if (logLevel) record.logLevel = logLevel;
  return record;
}

/**
 * Legacy sessions in Redis: a hash per session with a TTL, beside the set of the owners marking
 * it active; an index of all sessions by last use, and one per client (`{c:<client>}`).
 */
export function redisSessions(options: RedisSessionsOptions): SessionStore {
  const { redis, keys, idleMs, replicated, labelled } = options;
  const queued = unmarks(redis);
  return {
    idleMs,
    create: (record, maxSessions) =>
      labelled("sessions.create", async () => {
        const key = keys.session(record.id);
        const { logLevel, subscriptions, revision: _kept, ...fixed } = record;
        const fields = ["record", JSON.stringify(fixed)];
        fields.push("subscriptions", JSON.stringify(subscriptions));
        if (logLevel !== undefined) fields.push("logLevel", logLevel);
        if (record.client !== undefined) fields.push("client", record.client);
        const [evicted] = await Promise.all([
          admitSession(redis, [keys.sessionIndex], [record.id, maxSessions, idleMs]),
          writeSession(redis, [key], [idleMs, ...fields]).then(() => replicated(key)),
          record.client === undefined
            ? undefined
            : admitClientSession(redis, [keys.clientSessions(record.client)], [record.id, idleMs]),
        ]);
        if (!isStringArray(evicted)) return [];
        await Promise.all(evicted.map((id) => removeSession(options, id)));
        return evicted;
      }),

    get: (id, use) =>
      labelled("sessions.get", async () => {
        const { sessionKeys, args, elsewhere } = sessionUse(options, queued, id, use, [
          keys.sessionIndex,
        ]);
        const [fields] = await Promise.all([getSession(redis, sessionKeys, args), ...elsewhere]);
        if (!Array.isArray(fields) || typeof fields[0] !== "string") {
          // A stale index entry, if any (the script removed it when it had the index).
          if (redis.isCluster) await redis.zrem(keys.sessionIndex, id);
          return undefined;
        }
        return recordOf(fields as SessionFields);
      }),

    update: (id, patch) =>
      labelled("sessions.update", async () => {
        const args = updateArgs(patch);
        if (args) await updateSession(redis, [keys.session(id)], args);
      }),

    // The record's TTL, and its client's order with it. The index of all sessions is refreshed
    // by get, within the cache's freshness, enough for `maxSessions`.
    touch: (id, use) =>
      labelled("sessions.touch", async () => {
        const { sessionKeys, args, elsewhere } = sessionUse(options, queued, id, use);
        const [revision] = await Promise.all([
          touchSessionRecord(redis, sessionKeys, args),
          ...elsewhere,
        ]);
        return typeof revision === "number" && revision >= 0 ? revision : false;
      }),

    exists: (id) =>
      labelled("sessions.exists", async () => (await redis.exists(keys.session(id))) === 1),

    delete: (id) =>
      labelled("sessions.delete", async () => {
        const [deleted] = await Promise.all([
          removeSession(options, id),
          redis.zrem(keys.sessionIndex, id),
        ]);
        return deleted;
      }),

    ...clientsAndMarks(options, queued),
  };
}
