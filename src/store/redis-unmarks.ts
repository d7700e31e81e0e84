import type { RedisClient } from "./redis-scripts.js";

/**
 * KEYS: sets of active owners. ARGV: the owner to remove from each, in the same order. Sent by
 * EVAL every time, never EVALSHA: a NOSCRIPT retry would go out a round trip late, after a mark
 * taken meanwhile, and remove it.
 */
const UNMARK_ALL = `
for i = 1, #KEYS do redis.call('SREM', KEYS[i], ARGV[i]) end
return 1`;

interface Batch {
  /** Queued unmarks by `<key>\n<owner>`: the key of a session's active owners, and the owner. */
  entries: Map<string, [key: string, owner: string]>;
  sent: Promise<void>;
  send(sending: Promise<unknown>): void;
}

/** Unmarks of a session's active owners, sent once per event-loop turn (see {@link unmarks}). */
export interface Unmarks {
  /** Clears `owner`'s mark in set `key`, with the other unmarks of this turn. */
  unmark(key: string, owner: string): Promise<void>;
  /** Drops a queued unmark of `owner` in `key`: the owner marks it again, so it must stay. */
  marking(key: string, owner: string): void;
  /** Sends what is queued now, so a read of the marks sent after it sees it. */
  flush(): void;
}

/**
 * Clears the marks of a standalone Redis in batches: the sessions a process lets go of in one
 * event-loop turn (many, under load) are unmarked by one script, where each took a command of
 * its own. A mark taken again before its unmark goes out cancels it, so the store still ends as
 * the process's own view, as when each went out in order on one connection. On a Cluster each
 * session's set lives in a slot of its own: each unmark goes at once.
 */
export function unmarks(redis: RedisClient): Unmarks {
  if (redis.isCluster)
    return {
      unmark: async (key, owner) => {
        await redis.srem(key, owner);
      },
      marking: () => {},
      flush: () => {},
    };
  let batch: Batch | undefined;
  const flush = () => {
    const current = batch;
    if (!current) return;
    batch = undefined;
    const keys: string[] = [];
    const owners: string[] = [];
    for (const [key, owner] of current.entries.values()) {
      keys.push(key);
      owners.push(owner);
    }
    if (keys.length === 0) current.send(Promise.resolve());
    else if (keys.length === 1) current.send(redis.srem(keys[0]!, owners[0]!));
    else current.send(redis.eval(UNMARK_ALL, keys.length, ...keys, ...owners));
  };
  return {
    unmark(key, owner) {
      if (!batch) {
        let send!: Batch["send"];
        const sent = new Promise<void>((resolve) => {
          send = (sending) => resolve(sending.then(() => undefined));
        });
        const created: Batch = { entries: new Map(), sent, send };
        batch = created;
        setImmediate(() => {
          if (batch === created) flush();
        });
      }
      batch.entries.set(`${key}\n${owner}`, [key, owner]);
      return batch.sent;
    },
    marking(key, owner) {
      batch?.entries.delete(`${key}\n${owner}`);
    },
    flush,
  };
}
