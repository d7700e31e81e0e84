import type { RedisClient } from "./redis-scripts.js";

/** Waits until replicas hold the writes made so far to the node of `key`. */
export type ReplicaWait = (key: string) => Promise<void>;

/**
 * A {@link ReplicaWait} that sends `WAIT replicas timeoutMs`, or nothing when `replicas` is 0.
 * WAIT waits for the writes of the connection it runs on: a pipeline led by a command on `key`
 * goes, on a Cluster too, to the connection that wrote `key`. Fewer acknowledgements than asked
 * by the timeout is not an error: the write stands, with the risk it always had.
 */
export function replicaWait(redis: RedisClient, replicas: number, timeoutMs: number): ReplicaWait {
  if (replicas === 0) return async () => undefined;
  return async (key) => {
    const results = await redis.pipeline().exists(key).wait(replicas, timeoutMs).exec();
    for (const [error] of results ?? []) if (error) throw error;
  };
}
