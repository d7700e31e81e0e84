import { randomUUID } from "node:crypto";
import { Cluster, type ClusterOptions, Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type RedisCluster, startRedisCluster } from "../../examples/shared/redis-cluster.js";
import type { RedisServer } from "../../examples/shared/redis-server.js";
import { redisStore } from "../../src/store/redis.js";
import type { BusMessage, McpStore, SessionRecord } from "../../src/store/types.js";
import { CONTRACT_OPTIONS, describeStoreContract } from "./contract.js";

// The contract on a real Redis Cluster: three masters sharing the slots, a replica each, so a
// session's keys, and its sharded channels, live on one node of three and PUBLISH's count or
// order across channels would show up as failures here. Started once for the file.
let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
});
afterAll(async () => {
  await cluster?.close();
});

/**
 * ioredis options that carry commands through a master's failover. A command whose master is
 * gone is retried every `retryDelayOnFailover` ms (a slots refresh each time) until a replica
 * has taken the slot, at most `maxRedirections` times (32 × 250 ms: longer than a failover
 * with the test cluster's 1 s node timeout, shorter than a test): so it succeeds late or is
 * rejected, and never hangs. `clusterNodeRetryStrategy` reconnects a node that comes back
 * (the old master, as a replica) instead of leaving it out until the next topology change.
 */
const FAILOVER_OPTIONS: ClusterOptions = {
  retryDelayOnFailover: 250,
  retryDelayOnClusterDown: 250,
  retryDelayOnTryAgain: 250,
  maxRedirections: 32,
  slotsRefreshTimeout: 1_000,
  clusterNodeRetryStrategy: (times) => Math.min(times * 100, 1_000),
};

describeStoreContract("redisStore on a Redis Cluster of 3 masters", async () => {
  const prefix = `test:${randomUUID()}:`;
  const [one, two] = [1, 2].map(() => new Cluster(cluster.startupNodes, FAILOVER_OPTIONS));
  const store = redisStore({ redis: one!, prefix, ...CONTRACT_OPTIONS });
  const peer = redisStore({ redis: two!, prefix, ...CONTRACT_OPTIONS });
  return {
    store,
    peer,
    async cleanup() {
      await Promise.all([store.close(), peer.close()]);
      await Promise.all([one!.quit(), two!.quit()]);
    },
  };
});

/** Connections and stores a test opened, closed after it. */
const opened: (Cluster | Redis)[] = [];
const made: McpStore[] = [];

afterEach(async () => {
  await Promise.all(made.splice(0).map((store) => store.close()));
  await Promise.all(opened.splice(0).map((redis) => redis.quit().catch(() => redis.disconnect())));
});

function connect(): Cluster {
  const redis = new Cluster(cluster.startupNodes, FAILOVER_OPTIONS);
  // Node errors while a master is down are expected; commands say what failed.
  redis.on("error", () => undefined);
  opened.push(redis);
  return redis;
}

function node(server: RedisServer): Redis {
  const redis = new Redis(server.url);
  opened.push(redis);
  return redis;
}

/** The master that owns `key`'s slot now. */
async function masterOf(redis: Cluster, key: string): Promise<RedisServer> {
  const slot = Number(await redis.cluster("KEYSLOT", key));
  const ranges = await redis.cluster("SLOTS");
  const range = ranges.find(([start, end]) => start <= slot && slot <= end);
  const port = Number(range?.[2]?.[1]);
  const master = cluster.nodes.find((server) => server.port === port);
  if (!master) throw new Error(`no master for slot ${slot}`);
  return master;
}

/** Longest a command may take, during a failover included, before it counts as hung. */
const BOUND_MS = 15_000;

class Hung extends Error {}

/** `promise`, or a {@link Hung} rejection once it took longer than {@link BOUND_MS}. */
async function bounded<T>(promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Hung(`no answer in ${BOUND_MS} ms`)), BOUND_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function sessionRecord(id: string): SessionRecord {
  return {
    id,
    protocolVersion: "2025-06-18",
    capabilities: { roots: { listChanged: true } },
    subscriptions: ["file:///a"],
    principal: "",
    createdAt: 1_767_225_600_123,
  };
}

describe("redisStore on a Redis Cluster of 3 masters", () => {
  it("should subscribe a sharded channel on its slot's master only", async () => {
    const prefix = `where:${randomUUID()}:`;
    const store = redisStore({ redis: connect(), prefix });
    made.push(store);
    await store.bus.subscribe("session", () => {}, "s1");
    const name = `${prefix}{s:s1}:session`;
    const owner = await masterOf(connect(), name);
    const masters = await cluster.masters();
    expect(masters).toHaveLength(3);
    for (const master of masters) {
      const [, count] = await node(master).pubsub("SHARDNUMSUB", name);
      expect(count, `master on ${master.port}`).toBe(master === owner ? 1 : 0);
    }
  });

  it("should keep a lease, a session and a sharded subscription through its master's failover", async () => {
    const prefix = `failover:${randomUUID()}:`;
    // WAIT for the replica: a crash cannot take what it already holds (see redisStore).
    const options = { prefix, waitReplicas: 1, waitTimeoutMs: 5_000 };
    const [store, peer] = [
      redisStore({ ...options, redis: connect() }),
      redisStore({ ...options, redis: connect() }),
    ];
    made.push(store!, peer!);
    const session = `s-${randomUUID()}`;
    const lease = `${session}/get`;
    const record = sessionRecord(session);
    await store!.sessions.create(record, 100);
    expect(await store!.leases.acquire(lease, "process-a", 60_000)).toBe(true);
    const received: BusMessage[] = [];
    await peer!.bus.subscribe("session", (message) => received.push(message), session);
    await store!.bus.publish("session", "before", session);
    await vi.waitFor(() => expect(received).toEqual(["before"]));

    const epoch = peer!.bus.epoch!();
    const master = await masterOf(connect(), `${prefix}{s:${session}}:rec`);
    expect(await masterOf(connect(), `${prefix}{s:${session}}:lease:get`)).toBe(master);
    // Commands keep coming while the master is down: each succeeds or rejects, in bounded time.
    const now: { phase: "before" | "failover" | "over" } = { phase: "before" };
    const outcomes: string[] = [];
    const traffic = (async () => {
      while (now.phase !== "over") {
        const during = now.phase;
        const settled = await Promise.allSettled([
          bounded(peer!.leases.holder(lease)),
          bounded(peer!.sessions.exists(session)),
          bounded(store!.bus.publish("session", "during", session)),
        ]);
        for (const outcome of settled) {
          if (outcome.status === "fulfilled") outcomes.push(`${during}: answered`);
          else outcomes.push(outcome.reason instanceof Hung ? "hung" : `${during}: rejected`);
        }
      }
    })();
    const promoted = await cluster.failover(master, () => {
      now.phase = "failover";
    });
    now.phase = "over";
    await traffic;
    // Commands were sent from the master's end to the failover's, and none hung.
    expect(outcomes.filter((outcome) => outcome.startsWith("failover:")).length).toBeGreaterThan(0);
    expect(outcomes).not.toContain("hung");

    expect(await masterOf(connect(), `${prefix}{s:${session}}:rec`)).toBe(promoted);
    expect(await bounded(peer!.leases.holder(lease))).toBe("process-a");
    expect(await bounded(peer!.leases.acquire(lease, "process-b", 60_000))).toBe(false);
    expect(await bounded(store!.leases.renew(lease, "process-a", 60_000))).toBe(true);
    expect(await bounded(peer!.sessions.get(session))).toEqual({ ...record, revision: 0 });
    // The subscription moves to the promoted master by itself; what was published while it
    // moved may be lost (the bus's epoch says so), so publish until one arrives.
    await vi.waitFor(
      async () => {
        await bounded(store!.bus.publish("session", "after", session));
        expect(received).toContain("after");
      },
      { timeout: 20_000, interval: 250 },
    );
    // Messages may have been missed while the subscription moved: the epoch says so.
    expect(peer!.bus.epoch!()).not.toBe(epoch);
    expect(received[0]).toBe("before");
    expect(received.filter((message) => message !== "during")).toEqual([
      "before",
      ...received.filter((message) => message === "after"),
    ]);
  });
});
