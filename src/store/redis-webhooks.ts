import type { Keys } from "./redis-keys.js";
import type { ReplicaWait } from "./redis-replicas.js";
import { luaScript, NOW_MS, type RedisClient } from "./redis-scripts.js";
import type { WebhookRecord, WebhookStore } from "./types.js";

/**
 * KEYS: the subscription's hash (`v` version, `rec` JSON), its event type's index. ARGV:
 * expected version (0: must be absent), new version, JSON, expiry in epoch ms ('' for none),
 * id. Compare-and-set; the expiry is the key's own (PEXPIREAT), so a lapsed subscription is
 * absent to every later command, and its score in the index lets readers prune it. The JSON is
 * never decoded in Lua (cjson would turn `[]` into `{}`).
 */
const putWebhook = luaScript(`
local v = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '0' then
  if v then return 0 end
elseif v ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'rec', ARGV[3])
if ARGV[4] == '' then
  redis.call('PERSIST', KEYS[1])
  redis.call('ZADD', KEYS[2], '+inf', ARGV[5])
else
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
end
return 1`);

/** KEYS: the subscription's hash, its index. ARGV: id. Deletes both; 1 when it was live. */
const deleteWebhook = luaScript(`
local existed = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return existed`);

/**
 * KEYS: an event type's index. Forgets the ids whose expiry has passed by the Redis clock (the
 * one their keys lapse by) and lists the others.
 */
const liveWebhooks = luaScript(`
${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)`);

/** What the webhook store needs of the Redis store. */
export interface RedisWebhooksOptions {
  redis: RedisClient;
  keys: Keys;
  /** Run after a subscription is written or deleted (when the store waits for replicas). */
  replicated: ReplicaWait;
  /** Rewrites a rejection so that it names the store operation. */
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/**
 * Webhook subscriptions in Redis: a hash per subscription that expires by itself, and a sorted
 * set of an event type's subscriptions by expiry, all under the event type's hash tag. An
 * `expiresAt` from a process's clock is kept by the Redis clock: they differ by the skew only.
 */
export function redisWebhooks(options: RedisWebhooksOptions): WebhookStore {
  const { redis, keys, replicated, labelled } = options;
  return {
    put: (record, expectedVersion) =>
      labelled("webhooks.put", async () => {
        const key = keys.webhook(record.name, record.id);
        const stored = await putWebhook(
          redis,
          [key, keys.webhooks(record.name)],
          [
            String(expectedVersion),
            String(record.version),
            JSON.stringify(record),
            record.expiresAt === null ? "" : String(Math.ceil(record.expiresAt)),
            record.id,
          ],
        );
        if (stored === 1) await replicated(key);
        return stored === 1;
      }),

    get: (name, id) =>
      labelled("webhooks.get", async () => {
        const json = await redis.hget(keys.webhook(name, id), "rec");
        return json ? (JSON.parse(json) as WebhookRecord) : undefined;
      }),

    delete: (name, id) =>
      labelled("webhooks.delete", async () => {
        const keysOf = [keys.webhook(name, id), keys.webhooks(name)];
        const existed = (await deleteWebhook(redis, keysOf, [id])) === 1;
        if (existed) await replicated(keysOf[0]!);
        return existed;
      }),

    ofEvent: (name) =>
      labelled("webhooks.ofEvent", async () => {
        const ids = (await liveWebhooks(redis, [keys.webhooks(name)], [])) as string[];
        if (ids.length === 0) return [];
        // One slot, so one node: the reads go out as one pipeline.
        const pipeline = redis.pipeline();
        for (const id of ids) pipeline.hget(keys.webhook(name, id), "rec");
        const results = (await pipeline.exec()) ?? [];
        const records: WebhookRecord[] = [];
        for (const [error, json] of results) {
          if (error) throw error;
          // Deleted or lapsed since the index was read.
          if (typeof json === "string") records.push(JSON.parse(json) as WebhookRecord);
        }
        return records;
      }),
  };
}
