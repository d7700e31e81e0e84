import { eventsAfter, luaScript, type RedisClient } from "./redis-scripts.js";
import type { EventLog, LoggedEvent } from "./types.js";

/**
 * KEYS: stream logs. ARGV: the cap, the TTL in ms, then one entry per key. Appends each entry
 * to its log, trims it to the cap (only once it is over: a third less Redis time per script)
 * and renews its TTL: one round trip for every append a process makes in one turn of
 * its event loop (one change delivered to all its GET streams).
 */
const appendEvents = luaScript(`
local max = tonumber(ARGV[1])
for i = 1, #KEYS do
  if redis.call('RPUSH', KEYS[i], ARGV[i + 2]) > max then
    redis.call('LTRIM', KEYS[i], -max, -1)
  end
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
end
return #KEYS`);

/** Most appends sent in one script, so one script never holds Redis up for long. */
const MAX_BATCH = 4_096;

/** The JSON of a logged event, id first so a script can find it by prefix without parsing. */
function eventPrefix(id: string): string {
  return `{"id":${JSON.stringify(id)},`;
}

/** Appends queued in one turn of the event loop, sent together as one script. */
interface Batch {
  keys: string[];
  args: (string | number)[];
  sent: Promise<void>;
}

/** What the event log needs of the Redis store. */
export interface RedisEventLogOptions {
  redis: RedisClient;
  /** The key of a stream's log. */
  keyOf: (stream: string) => string;
  maxEvents: number;
  ttlMs: number;
  /** Rewrites a rejection so that it names the store operation. */
  labelled: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/**
 * Per-stream replay logs in Redis lists. Appends made in one turn of the event loop go in one
 * script (in order, on one connection, so each log keeps its order); on a Cluster, whose logs
 * sit in different slots, each append is its own transaction.
 */
export function redisEventLog(options: RedisEventLogOptions): EventLog {
  const { redis, keyOf, maxEvents, ttlMs, labelled } = options;
  let open: Batch | undefined;
  // A change goes to many streams as one message object: it is serialised once per batch.
  let lastMessage: unknown;
  let lastJson = "";
  const send = (batch: Batch) =>
    labelled("events.append", async () => {
      if (open === batch) open = undefined;
      lastMessage = undefined;
      await appendEvents(redis, batch.keys, batch.args);
    });
  const queue = (key: string, entry: string): Promise<void> => {
    if (!open || open.keys.length >= MAX_BATCH) {
      const batch: Batch = { keys: [], args: [maxEvents, ttlMs], sent: Promise.resolve() };
      batch.sent = Promise.resolve().then(() => send(batch));
      open = batch;
    }
    open.keys.push(key);
    open.args.push(entry);
    return open.sent;
  };
  return {
    append(stream, event) {
      const key = keyOf(stream);
      if (event.message !== lastMessage) {
        lastJson = JSON.stringify(event.message);
        lastMessage = redis.isCluster ? undefined : event.message;
      }
      const entry = `${eventPrefix(event.id)}"message":${lastJson}}`;
      if (!redis.isCluster) return queue(key, entry);
      return labelled("events.append", async () => {
        const results = await redis
          .multi()
          .rpush(key, entry)
          .ltrim(key, -maxEvents, -1)
          .pexpire(key, ttlMs)
          .exec();
        for (const [error] of results ?? []) if (error) throw error;
      });
    },

    after: (stream, lastEventId) =>
      labelled("events.after", async () => {
        const entries = await eventsAfter(redis, [keyOf(stream)], [eventPrefix(lastEventId)]);
        if (!Array.isArray(entries) || !entries.every((entry) => typeof entry === "string"))
          return undefined;
        return entries.map((entry) => JSON.parse(entry) as LoggedEvent);
      }),

    drop: (stream) =>
      labelled("events.drop", async () => {
        await redis.del(keyOf(stream));
      }),
  };
}
