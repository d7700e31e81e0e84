import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { redisStore } from "../../src/store/redis.js";
import { startMonitor } from "../helpers/redis-monitor.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { CONTRACT_OPTIONS, describeStoreContract } from "./contract.js";

// A one-node Redis Cluster still refuses commands and scripts whose keys span hash slots
// (CROSSSLOT), so the whole contract passing here shows the key layout suits a real cluster
// (redis-cluster-nodes.test.ts runs it on three masters).
let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer({ cluster: true });
});
afterAll(async () => {
  await server?.close();
});

describeStoreContract("redisStore on a one-node Redis Cluster", async () => {
  const prefix = `test:${randomUUID()}:`;
  const nodes = [{ host: "127.0.0.1", port: server.port }];
  const [one, two] = [new Cluster(nodes), new Cluster(nodes)];
  const store = redisStore({ redis: one, prefix, ...CONTRACT_OPTIONS });
  const peer = redisStore({ redis: two, prefix, ...CONTRACT_OPTIONS });
  return {
    store,
    peer,
    async cleanup() {
      await Promise.all([store.close(), peer.close()]);
      await Promise.all([one.quit(), two.quit()]);
    },
  };
});

describe("redisStore on a Redis Cluster", () => {
  it("should refuse a Cluster subscriber without sharded subscribers at construction", async () => {
    const nodes = [{ host: "127.0.0.1", port: server.port }];
    const [redis, subscriber] = [new Cluster(nodes), new Cluster(nodes, { lazyConnect: true })];
    try {
      // Its SSUBSCRIBEs would all go to one node, not to each channel's master.
      expect(() => redisStore({ redis, subscriber })).toThrow(/shardedSubscribers/);
      const sharded = new Cluster(nodes, { lazyConnect: true, shardedSubscribers: true });
      expect(() => redisStore({ redis, subscriber: sharded })).not.toThrow();
      sharded.disconnect();
    } finally {
      subscriber.disconnect();
      await redis.quit();
    }
  });

  it("should send a turn's appends as one script per session (hash tag), each log in order", async () => {
    const prefix = `batch:${randomUUID()}:`;
    const monitor = await startMonitor(server.url);
    const inspector = new Redis(server.url);
    const commands: string[] = [];
    // Commands the client sent; those a script ran inside Redis come from "lua".
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua" && args.some((arg) => arg.startsWith(prefix)))
        commands.push(`${args[0]!.toLowerCase()} ${args[1]}`);
    });
    // The Cluster starts once MONITOR has shown a first line.
    await inspector.echo(`${prefix}monitoring`);
    await vi.waitFor(() => expect(commands.at(-1)).toMatch(/^echo/));
    commands.length = 0;
    const redis = new Cluster([{ host: "127.0.0.1", port: server.port }]);
    const store = redisStore({ redis, prefix, maxEventsPerStream: 3 });
    try {
      // Loads the script, so what follows is counted warm; MONITOR lags, so a marker shows
      // when everything before it was seen.
      await store.events.append("warm/g", { id: "g.1", message: {} });
      await inspector.echo(`${prefix}marker`);
      await vi.waitFor(() => expect(commands.at(-1)).toMatch(/^echo/));
      commands.length = 0;
      // 10 sessions of 5 streams each: one change to all 50 streams, then 3 events on each.
      const streams = Array.from({ length: 50 }, (_, i) => `s${i % 10}/g${i}`);
      const change = { jsonrpc: "2.0", method: "notifications/tools/list_changed" };
      await Promise.all(
        streams.map((s, i) => store.events.append(s, { id: `g${i}.1`, message: change })),
      );
      await vi.waitFor(() => expect(commands).toHaveLength(10));
      // evalsha <sha> each: one script per session, none per stream.
      expect(new Set(commands)).toHaveProperty("size", 1);
      expect(commands[0]).toMatch(/^evalsha /);
      await Promise.all(
        [2, 3, 4].flatMap((n) =>
          streams.map((s, i) => store.events.append(s, { id: `g${i}.${n}`, message: { n } })),
        ),
      );
      await vi.waitFor(() => expect(commands).toHaveLength(20));
      for (const [i, stream] of streams.entries()) {
        expect(await store.events.after(stream, `g${i}.2`)).toEqual([
          { id: `g${i}.3`, message: { n: 3 } },
          { id: `g${i}.4`, message: { n: 4 } },
        ]);
      }
    } finally {
      monitor.disconnect();
      await store.close();
      await Promise.all([redis.quit(), inspector.quit()]);
    }
  });
});
