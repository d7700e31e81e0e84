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

/**
 * The Redis store when REDIS_URL is set (sessions, nonces and change notifications shared with
 * every process on that Redis), else none (the in-memory default). ioredis and the Redis store
 * load only then. `close()` releases the connection after `mcp.close()`.
 */
export async function storeFromEnv(): Promise<{
  store: McpStore | undefined;
  close(): Promise<void>;
}> {
  if (!process.env.REDIS_URL) return { store: undefined, close: async () => {} };
  const { Redis } = await import("ioredis");
  const { redisStore } = await import("mcp-mount/redis");
  // Fail fast while Redis is down (legacy requests then get 503 at once), and so wait until the
  // connection is ready before serving.
  const redis = new Redis(process.env.REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
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
