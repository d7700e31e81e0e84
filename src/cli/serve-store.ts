import type { McpStore } from "../store/types.js";
import type { ServeRedis } from "./serve-options.js";
import { printMessage } from "./terminal.js";

/** The Redis store `serve --redis` shares with other processes, and what releases it. */
export interface SharedStore {
  store: McpStore;
  /** Quits the connection, after the handler's drain has closed the store. */
  close(): Promise<void>;
}

/**
 * Connects to Redis and builds the store on it. ioredis, an optional peer, and the store load
 * only here, so `serve` without `--redis` needs neither. The connection fails fast while Redis
 * is down (no offline queue, one retry per command), so requests get a 503 at once rather than
 * wait through ioredis' reconnection backoff; a Cluster's commands ride out a failover.
 */
export async function connectStore(redis: ServeRedis): Promise<SharedStore> {
  const ioredis = await import("ioredis").catch((error: unknown) => {
    throw new Error("--redis needs the ioredis package: npm install ioredis", { cause: error });
  });
  const { redisStore } = await import("../store/redis.js");
  const failFast = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;
  const connection =
    redis.kind === "cluster"
      ? new ioredis.Cluster(redis.nodes, {
          enableOfflineQueue: false,
          retryDelayOnFailover: 250,
          retryDelayOnClusterDown: 250,
          retryDelayOnTryAgain: 250,
          maxRedirections: 32,
          redisOptions: failFast,
        })
      : new ioredis.Redis(redis.url, failFast);
  // A Redis that cannot be reached at start is an error to fix, not one to wait through.
  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      connection.disconnect();
      reject(new Error(`Redis did not answer: ${error.message}`, { cause: error }));
    };
    connection.once("error", fail);
    connection.once("ready", () => {
      connection.off("error", fail);
      resolve();
    });
  });
  connection.on("error", (error: Error) => printMessage(`Redis: ${error.message}`));
  return {
    store: redisStore({ redis: connection }),
    async close() {
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
