import type { ClusterOptions } from "ioredis";
import type { McpStore } from "mcp-mount";

/**
 * The sealing secret from MCP_SECRET. Every process behind one endpoint must share it, so a
 * multi round-trip request can finish on any of them; without it, a fixed development secret.
 */
export function secretFromEnv(fallback: string): string {
  if (process.env.MCP_SECRET !== undefined) return process.env.MCP_SECRET;
  console.warn("MCP_SECRET is not set: using a fixed development secret. Set it in production.");
  return fallback;
}

/** `host:port,host:port` as ioredis takes a list of nodes. */
function nodesOf(list: string): { host: string; port: number }[] {
  return list
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => {
      const at = entry.lastIndexOf(":");
      const port = Number(entry.slice(at + 1));
      if (at < 1 || !Number.isInteger(port)) throw new Error(`not host:port: ${entry}`);
      return { host: entry.slice(0, at).replace(/^\[|\]$/g, ""), port };
    });
}

/** Which Redis the environment names, if any: a Cluster, a Sentinel-watched primary, or one node. */
export function redisTopologyFromEnv(
  env: NodeJS.ProcessEnv = process.env,
):
  | { kind: "cluster"; nodes: { host: string; port: number }[] }
  | { kind: "sentinel"; sentinels: { host: string; port: number }[]; name: string }
  | { kind: "standalone"; url: string }
  | undefined {
  if (env.REDIS_CLUSTER_NODES) return { kind: "cluster", nodes: nodesOf(env.REDIS_CLUSTER_NODES) };
  if (env.REDIS_SENTINELS) {
    const name = env.REDIS_SENTINEL_NAME ?? "mymaster";
    return { kind: "sentinel", sentinels: nodesOf(env.REDIS_SENTINELS), name };
  }
  if (env.REDIS_URL) return { kind: "standalone", url: env.REDIS_URL };
  return undefined;
}

/**
 * ioredis `Cluster` options that carry a request through a master's failover rather than fail
 * it. A command whose master is gone is retried every 250 ms, each time after a slots refresh,
 * until a replica has taken the slot: at most 32 times (8 s, longer than a failover with a
 * `cluster-node-timeout` of a few seconds), so it succeeds late or fails, never hangs. With the
 * defaults (100 ms, 16 times: 1.6 s) more requests get a 503 during a failover, which clients
 * retry. `clusterNodeRetryStrategy` reconnects a node that comes back (the old master, as a
 * replica). What no option recovers: replication is asynchronous and pub/sub is not stored, so
 * without persistence (AOF) the writes a master acknowledged just before it crashed, not yet on
 * its replica, are gone (a session created then is unknown; its client initializes again), and
 * a change published in that moment may reach no stream. `redisStore({ waitReplicas: 1 })`
 * makes session creations and deletions and lease acquisitions wait for a replica.
 */
export const CLUSTER_FAILOVER_OPTIONS = {
  retryDelayOnFailover: 250,
  retryDelayOnClusterDown: 250,
  retryDelayOnTryAgain: 250,
  maxRedirections: 32,
  slotsRefreshTimeout: 1_000,
  clusterNodeRetryStrategy: (times: number) => Math.min(times * 100, 1_000),
} as const satisfies ClusterOptions;

/**
 * A connection to `topology` that fails fast while Redis is down (legacy requests then get 503
 * at once; wait for its `ready` before serving): no offline queue, one retry per command. With
 * the offline queue ioredis would hold commands through its reconnection backoff (up to ~5 s a
 * try). On a Cluster, a command whose master crashed waits for its replica to take over
 * ({@link CLUSTER_FAILOVER_OPTIONS}). `ioredis` is passed in, so it loads only when used.
 */
export function connectRedis(
  topology: NonNullable<ReturnType<typeof redisTopologyFromEnv>>,
  ioredis: { Redis: typeof import("ioredis").Redis; Cluster: typeof import("ioredis").Cluster },
): import("ioredis").Redis | import("ioredis").Cluster {
  const failFast = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;
  if (topology.kind === "cluster") {
    const options = { ...CLUSTER_FAILOVER_OPTIONS, enableOfflineQueue: false };
    return new ioredis.Cluster(topology.nodes, { ...options, redisOptions: failFast });
  }
  if (topology.kind === "sentinel") {
    const { sentinels, name } = topology;
    return new ioredis.Redis({ sentinels, name, ...failFast });
  }
  return new ioredis.Redis(topology.url, failFast);
}

/**
 * The Redis store when the environment names a Redis (sessions, nonces and change
 * notifications shared with every process on it), else none (the in-memory default):
 * `REDIS_CLUSTER_NODES=host:port,…` (Redis Cluster), `REDIS_SENTINELS=host:port,…` with
 * `REDIS_SENTINEL_NAME` (Sentinel; default `mymaster`), or `REDIS_URL` (one node). ioredis and
 * the Redis store load only then. `close()` releases the connection after `mcp.close()`.
 */
export async function storeFromEnv(): Promise<{
  store: McpStore | undefined;
  close(): Promise<void>;
}> {
  const topology = redisTopologyFromEnv();
  if (!topology) return { store: undefined, close: async () => {} };
  const { redisStore } = await import("mcp-mount/redis");
  const redis = connectRedis(topology, await import("ioredis"));
  redis.on("error", (error: Error) => console.error(`Redis: ${error.message}`));
  await new Promise<void>((resolve) => redis.once("ready", () => resolve()));
  return {
    store: redisStore({ redis }),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * The browser origins allowed to call the endpoint, from MCP_CORS_ORIGINS (comma-separated, e.g.
 * `http://localhost:5173,https://app.example.com`): pages there may call it across origins
 * (CORS), and any other page's request is refused. Unset: the handler's default (same-origin,
 * plus loopback pages on a loopback host).
 */
export function corsOriginsFromEnv(): string[] | undefined {
  const origins = (process.env.MCP_CORS_ORIGINS ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
  return origins.length > 0 ? origins : undefined;
}
