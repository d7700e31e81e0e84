// The batched rate limiter (`rateLimit.share`) against a real Redis: one node, and a Cluster of
// three masters, where every settle is one script whose keys must share a slot.
import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisCluster, startRedisCluster } from "../../examples/shared/redis-cluster.js";
import { BatchedRateLimiter } from "../../src/store/batched-rate-limiter.js";
import { redisSharedCounts } from "../../src/store/redis-batched-rate-limiter.js";
import { redisRateLimiters } from "../../src/store/redis-rate-limiter.js";
import type { RedisClient } from "../../src/store/redis-scripts.js";
import type { RateLimiter, RateLimitPolicy } from "../../src/store/types.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";

// A day: windows are aligned to the clock, and these tests must not straddle one's end.
const DAY = 86_400_000;

interface Topology {
  name: string;
  start(): Promise<{ connect(): RedisClient; close(): Promise<void> }>;
}

const topologies: Topology[] = [
  {
    name: "one Redis node",
    async start() {
      const server: RedisServer = await startRedisServer();
      return { connect: () => new Redis(server.url), close: () => server.close() };
    },
  },
  {
    name: "a Redis Cluster of 3 masters",
    async start() {
      const cluster: RedisCluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
      return { connect: () => new Cluster(cluster.startupNodes), close: () => cluster.close() };
    },
  },
];

/** Charges `key` one point at a time on the limiters in turn until every one refuses. */
async function spendAll(limiters: RateLimiter[], key: string): Promise<number> {
  let allowed = 0;
  const refused = new Set<number>();
  for (let turn = 0; refused.size < limiters.length; turn++) {
    const at = turn % limiters.length;
    if ((await limiters[at]!.consume(key, 1)).allowed) allowed++;
    else refused.add(at);
  }
  return allowed;
}

describe.each(topologies)("the batched rate limiter on $name", (topology) => {
  let redis: Awaited<ReturnType<Topology["start"]>>;
  const connections: RedisClient[] = [];
  const connect = () => {
    const connection = redis.connect();
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    redis = await topology.start();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.quit()));
    await redis?.close();
  });

  /** Limiters of one policy as `n` processes would make them, each on its own connection. */
  const processes = (n: number, policy: RateLimitPolicy) => {
    const prefix = `t:${randomUUID()}:`;
    const stores = Array.from({ length: n }, () => redisRateLimiters(connect(), prefix));
    return { prefix, stores, limiters: Promise.all(stores.map((s) => s.limiter(policy))) };
  };

  /** The shared count of `key` in the window now, as Redis holds it. */
  const sharedCount = async (prefix: string, policy: RateLimitPolicy, key: string) => {
    const window = Math.floor(Date.now() / policy.windowMs);
    const hash = `${prefix}{rl:${policy.points}/${policy.windowMs}}:${window}`;
    return Number((await connections[0]!.hget(hash, key)) ?? 0);
  };

  it("should admit exactly the budget in one process, whatever its share", async () => {
    const policy = { points: 10, windowMs: DAY, share: 3 };
    const { prefix, stores, limiters } = processes(1, policy);
    expect(await spendAll(await limiters, "alice")).toBe(10);
    await stores[0]!.close();
    expect(await sharedCount(prefix, policy, "alice")).toBe(10);
  });

  it("should keep three processes within the budget plus three shares, and lose no point", async () => {
    const policy = { points: 30, windowMs: DAY, share: 4 };
    const { prefix, stores, limiters } = processes(3, policy);
    const allowed = await spendAll(await limiters, "bob");
    expect(allowed).toBeGreaterThanOrEqual(policy.points);
    expect(allowed).toBeLessThanOrEqual(policy.points + 3 * policy.share);
    await Promise.all(stores.map((store) => store.close()));
    expect(await sharedCount(prefix, policy, "bob")).toBe(allowed);
  });

  it("should settle on close what stayed below the share", async () => {
    const policy = { points: 100, windowMs: DAY, share: 10 };
    const { prefix, stores, limiters } = processes(1, policy);
    const [limiter] = await limiters;
    for (let n = 0; n < 3; n++) expect((await limiter!.consume("carol", 1)).allowed).toBe(true);
    // Below half the share: nothing was sent yet (the timer settles it within a second).
    await stores[0]!.close();
    expect(await sharedCount(prefix, policy, "carol")).toBe(3);
  });

  it("should never take a refused charge, so a cheaper one still fits", async () => {
    const policy = { points: 5, windowMs: DAY, share: 2 };
    const { prefix, stores, limiters } = processes(1, policy);
    const [limiter] = await limiters;
    expect((await limiter!.consume("dave", 2)).allowed).toBe(true);
    // Dearer than the share: Redis decides at once, within what this process spent.
    expect(await limiter!.consume("dave", 4)).toMatchObject({ allowed: false, remaining: 3 });
    expect(await limiter!.consume("dave", 3)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter!.consume("dave", 1)).allowed).toBe(false);
    await stores[0]!.close();
    expect(await sharedCount(prefix, policy, "dave")).toBe(5);
  });

  it("should start each window whole, and settle points of a window that ended in its own", async () => {
    const policy = { points: 10, windowMs: 60_000, share: 10 };
    const keyPrefix = `t:${randomUUID()}:{rl}`;
    let now = 7 * policy.windowMs + 1_000;
    const counts = redisSharedCounts(connect(), keyPrefix);
    const limiter = new BatchedRateLimiter(policy, counts, () => now);
    // Below half the share: kept here, unsent.
    expect(await limiter.consume("erin", 4)).toMatchObject({ allowed: true, resetMs: 59_000 });
    now += policy.windowMs;
    expect(await limiter.consume("erin", 10)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.consume("erin", 1)).allowed).toBe(false);
    await limiter.close();
    // One settle spanned both windows' hashes: on a Cluster it works only if they share a slot.
    const hashes = [7, 8].map((window) => connections[0]!.hget(`${keyPrefix}:${window}`, "erin"));
    expect((await Promise.all(hashes)).map(Number)).toEqual([4, 10]);
  });

  it("should keep a policy without a share exact across processes", async () => {
    const policy = { points: 3, windowMs: DAY };
    const { stores, limiters } = processes(2, policy);
    expect(await spendAll(await limiters, "frank")).toBe(3);
    await Promise.all(stores.map((store) => store.close()));
  });
});
