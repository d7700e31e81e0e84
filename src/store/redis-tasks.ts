import { createHash } from "node:crypto";
import { luaScript, NOW_MS, type RedisClient } from "./redis-scripts.js";
import type { TaskRecord, TaskStore } from "./types.js";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/**
 * KEYS: a principal's set of unfinished task ids, scored by expiry. ARGV: id, max, expiry (ms),
 * ttl (ms). Forgets expired entries; adds the id unless the principal is at its cap (returns 0).
 */
const admitTask = luaScript(`
${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`);

/**
 * KEYS: a task hash (`v` version, `rec` JSON). ARGV: expected version, new version, new JSON.
 * Compare-and-set: the JSON is never decoded in Lua (cjson would turn `[]` into `{}`).
 */
const replaceTask = luaScript(`
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'rec', ARGV[3])
return 1`);

/** Task keys: each task in its own slot, each principal's cap in another (one key per script). */
function taskKeys(prefix: string) {
  return {
    task: (id: string) => `${prefix}{t:${id}}:task`,
    active(principal: string) {
      const digest = createHash("sha256").update(principal).digest("base64url").slice(0, 22);
      return `${prefix}{p:${digest}}:tasks`;
    },
  };
}

/** Tasks in Redis: a hash per task with a TTL, written by compare-and-set on its version. */
export function redisTasks(
  redis: RedisClient,
  prefix: string,
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>,
): TaskStore {
  const keys = taskKeys(prefix);
  return {
    create: (record, maxActive) =>
      labelled("tasks.create", async () => {
        const expires = record.createdAt + record.ttlMs;
        const admitted = await admitTask(
          redis,
          [keys.active(record.quota ?? record.principal)],
          [record.id, maxActive, expires, record.ttlMs],
        );
        if (admitted !== 1) return false;
        const key = keys.task(record.id);
        const results = await redis
          .multi()
          .hset(key, "v", String(record.version), "rec", JSON.stringify(record))
          .pexpire(key, record.ttlMs)
          .exec();
        for (const [error] of results ?? []) if (error) throw error;
        return true;
      }),

    get: (id) =>
      labelled("tasks.get", async () => {
        const json = await redis.hget(keys.task(id), "rec");
        return json ? (JSON.parse(json) as TaskRecord) : undefined;
      }),

    replace: (record, expectedVersion) =>
      labelled("tasks.replace", async () => {
        const replaced = await replaceTask(
          redis,
          [keys.task(record.id)],
          [String(expectedVersion), String(record.version), JSON.stringify(record)],
        );
        if (replaced !== 1) return false;
        if (TERMINAL.has(record.status))
          await redis.zrem(keys.active(record.quota ?? record.principal), record.id);
        return true;
      }),
  };
}
