import { hashTag } from "./redis-keys.js";
import { eventsAfter, luaScript, type RedisClient } from "./redis-scripts.js";
import type { EventLog, LoggedEvent } from "./types.js";

/**
 * KEYS: stream logs, in one slot. ARGV: the cap, the TTL in ms, then one entry per key. Appends
 * each entry to its log, trims it to the cap (only once it is over: a third less Redis time per
 * script) and renews its TTL.
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

/** Most appends sent in one turn's batch, so one script never holds Redis up for long. */
const MAX_BATCH = 4_096;

/** The JSON of a logged event, id first so a script can find it by prefix without parsing. */
function eventPrefix(id: string): string {
  return `{"id":${JSON.stringify(id)},`;
}

/** The appends of one script: logs of one hash tag (one slot), in the order they were made. */
interface Group {
  keys: string[];
  args: (string | number)[];
  /** Settles with this group's script, whatever becomes of the others'. */
  sent: Promise<void>;
}

/** Appends queued in one turn of the event loop, by hash tag. */
interface Batch {
  groups: Map<string, Group>;
  size: number;
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
 * Per-stream replay logs in Redis lists. The appends made in one turn of the event loop go in
 * one script per hash tag: one in all on a standalone Redis; on a Cluster, one per session
 * whose streams got an event (a script's keys must share a slot), sent at once. A log's appends
 * go in order on one connection, so each log keeps its order.
 */
export function redisEventLog(options: RedisEventLogOptions): EventLog {
  const { redis, keyOf, maxEvents, ttlMs, labelled } = options;
  // A standalone Redis has no slots: every log can go in one script.
  const tagOf = redis.isCluster ? hashTag : () => "";
  let open: Batch | undefined;
  // A change goes to many streams as one message object: it is serialised once per batch.
  let lastMessage: unknown;
  let lastJson = "";
  const start = (): Batch => {
    const batch: Batch = { groups: new Map(), size: 0 };
    // Queued before any of its groups' scripts: once they run, appends start a new batch.
    queueMicrotask(() => {
      if (open === batch) open = undefined;
      lastMessage = undefined;
    });
    return batch;
  };
  const group = (batch: Batch, tag: string): Group => {
    const known = batch.groups.get(tag);
    if (known) return known;
    const created: Group = { keys: [], args: [], sent: Promise.resolve() };
    created.sent = Promise.resolve().then(() =>
      labelled("events.append", async () => {
        await appendEvents(redis, created.keys, [maxEvents, ttlMs, ...created.args]);
      }),
    );
    batch.groups.set(tag, created);
    return created;
  };
  const queue = (key: string, entry: string): Promise<void> => {
    if (!open || open.size >= MAX_BATCH) open = start();
    const into = group(open, tagOf(key));
    into.keys.push(key);
    into.args.push(entry);
    open.size++;
    return into.sent;
  };
  return {
    append(stream, event) {
      if (event.message !== lastMessage) {
        lastJson = JSON.stringify(event.message);
        lastMessage = event.message;
      }
      const change = event.eid === undefined ? "" : `,"eid":${JSON.stringify(event.eid)}`;
      return queue(keyOf(stream), `${eventPrefix(event.id)}"message":${lastJson}${change}}`);
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
