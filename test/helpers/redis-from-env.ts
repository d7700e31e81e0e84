import { once } from "node:events";
import { Cluster, Redis } from "ioredis";
import { connectRedis, redisTopologyFromEnv } from "../../examples/shared/env.js";

/**
 * The Redis a test server process is told to use: `REDIS_CLUSTER_NODES` (a Redis Cluster) or
 * `REDIS_URL`, connected as the examples connect (fail fast while Redis is down; on a Cluster,
 * wait for a crashed master's replica), ready before it is returned.
 */
export async function redisFromEnv(who: string): Promise<Redis | Cluster> {
  const topology = redisTopologyFromEnv();
  if (!topology || topology.kind === "sentinel")
    throw new Error(`${who}: REDIS_URL or REDIS_CLUSTER_NODES is required`);
  const redis = connectRedis(topology, { Redis, Cluster });
  redis.on("error", () => undefined);
  // Without the offline queue, commands sent before the connection is ready would fail too.
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
}
