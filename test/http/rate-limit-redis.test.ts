// Rate limits kept in Redis, and what they do while Redis is down (the store's outage policy:
// 503 with Retry-After, or `failOpen`).
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createMcpHandler, type McpHandlerOptions, McpServer } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import type { McpStore } from "../../src/store/types.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type RawRequest, type Send } from "../helpers/modern.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";

let server: RedisServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await server?.close();
});

/** A connection set up as the README says: no offline queue, so failures come at once. */
async function failFast(): Promise<Redis> {
  const redis = new Redis(server.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: () => 50,
  });
  redis.on("error", () => {}); // the outage is expected
  cleanups.push(async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
}

/** Restarts Redis and waits until the store is whole again, its subscriber too. */
async function restart(store: McpStore): Promise<void> {
  await server.start();
  await vi.waitFor(() => expect(store.bus.epoch?.()).toBeGreaterThanOrEqual(0), {
    timeout: 10_000,
  });
}

function endpoint(redis: Redis, options: McpHandlerOptions) {
  const mcpServer = new McpServer({ name: "limited", version: "1.0.0" });
  mcpServer.tool({ name: "cheap" }, () => "cheap");
  const store = redisStore({ redis, prefix: `rl:${randomUUID()}:` });
  const mcp = createMcpHandler(mcpServer, { store, ...options });
  cleanups.push(() => mcp.close());
  const send: Send = async (request: RawRequest) => {
    const response = await mcp.fetch(new Request("http://127.0.0.1/mcp", request), {
      remoteAddress: "10.0.0.1",
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return { send, store };
}

describe("rate limits in Redis", () => {
  it("should answer 503 while the limiter's Redis is down, then charge again once it is back", async () => {
    const redis = await failFast();
    const errors: unknown[] = [];
    const { send, store } = endpoint(redis, {
      rateLimit: { points: 100 },
      onError: (error) => errors.push(error),
    });
    expect((await call(send, "tools/list")).headers.get("ratelimit")).toBe('"default";r=99;t=60');

    await server.stop();
    try {
      await vi.waitFor(() => expect(redis.status).not.toBe("ready"));
      const refused = await call(send, "tools/call", { name: "cheap", arguments: {} });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(refused.error?.code).toBe(-32603);
      expect(refused.error?.message).toMatch(/Rate limit store unavailable/);
      expect(refused.headers.get("ratelimit")).toBeNull();
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await restart(store);
    }

    // Back, and empty (the restarted Redis kept nothing): a fresh budget.
    const served = await call(send, "tools/call", { name: "cheap", arguments: {} });
    expect(served.status).toBe(200);
    expect(served.headers.get("ratelimit")).toMatch(/^"default";r=99;t=\d+$/);
  });

  it("should serve modern requests unlimited while Redis is down with failOpen", async () => {
    const redis = await failFast();
    const errors: unknown[] = [];
    const { send, store } = endpoint(redis, {
      rateLimit: { points: 1, failOpen: true },
      onError: (error) => errors.push(error),
    });
    const session = await openSession(send); // spends the only point
    expect((await call(send, "tools/list")).status).toBe(429);

    await server.stop();
    try {
      await vi.waitFor(() => expect(redis.status).not.toBe("ready"));
      for (let n = 0; n < 3; n++) {
        const served = await call(send, "tools/call", { name: "cheap", arguments: {} });
        expect(served.status).toBe(200);
        expect(served.result.content).toEqual([{ type: "text", text: "cheap" }]);
        expect(served.headers.get("ratelimit")).toBeNull();
      }
      expect(errors.length).toBeGreaterThanOrEqual(3);
      // A legacy session lives in the same Redis: its requests get the session store's 503.
      const legacy = await legacyCall(send, session, "tools/list");
      expect(legacy.status).toBe(503);
      expect(legacy.error?.message).toMatch(/Session store unavailable/);
    } finally {
      await restart(store);
    }
  });
});
