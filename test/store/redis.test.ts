import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Redis, type RedisOptions } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type RedisStoreOptions, redisStore } from "../../src/store/redis.js";
import type { BusMessage, McpStore, SessionRecord } from "../../src/store/types.js";
import { startMonitor } from "../helpers/redis-monitor.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { CONTRACT_OPTIONS, describeStoreContract } from "./contract.js";

let server: RedisServer;
/** Connections a test opened, quit after it. */
const opened: Redis[] = [];
/** Stores a test made, closed after it. */
const made: McpStore[] = [];

beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  await Promise.all(made.splice(0).map((store) => store.close()));
  await Promise.all(opened.splice(0).map((redis) => redis.quit().catch(() => redis.disconnect())));
});
afterAll(async () => {
  await server?.close();
});

function connection(options: RedisOptions = {}): Redis {
  const redis = new Redis(server.url, options);
  opened.push(redis);
  return redis;
}

async function ready(redis: Redis): Promise<Redis> {
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
}

/** A store on its own connection (or `redis`), closed after the test. */
function makeStore(options: Partial<RedisStoreOptions> = {}): McpStore {
  const store = redisStore({
    ...CONTRACT_OPTIONS,
    ...options,
    redis: options.redis ?? connection(),
  });
  made.push(store);
  return store;
}

function sessionRecord(id: string): SessionRecord {
  return {
    id,
    protocolVersion: "2025-11-25",
    capabilities: {},
    subscriptions: [],
    principal: "",
    createdAt: 1,
  };
}

describeStoreContract("redisStore", async () => {
  // Two connections and two stores on one Redis: two processes sharing the store.
  const prefix = `test:${randomUUID()}:`;
  const [one, two] = [new Redis(server.url), new Redis(server.url)];
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

describe("redisStore in Redis", () => {
  it("should keep every key under the prefix, and a session's keys under one hash tag", async () => {
    const prefix = `layout:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    await store.sessions.create(sessionRecord("AbC_-12"), 10);
    await store.events.append("AbC_-12/stream1", { id: "stream1.1", message: {} });
    await store.nonces.claim("state:n1", 60_000);

    const record = `${prefix}{s:AbC_-12}:rec`;
    const log = `${prefix}{s:AbC_-12}:log:stream1`;
    expect((await inspector.keys(`${prefix}*`)).sort()).toEqual(
      [record, log, `${prefix}sessions`, `${prefix}nonce:state:n1`].sort(),
    );
    expect(await inspector.keys("mcp:*")).toEqual([]);
    // Redis Cluster hashes only what is inside the first {…}: both keys land in one slot.
    const hashTag = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];
    expect(hashTag(record)).toBe("s:AbC_-12");
    expect(hashTag(log)).toBe("s:AbC_-12");

    for (const [key, ttl] of [
      [record, CONTRACT_OPTIONS.sessionIdleMs],
      [log, CONTRACT_OPTIONS.sessionIdleMs],
      [`${prefix}nonce:state:n1`, 60_000],
    ] as const) {
      const remaining = await inspector.pttl(key);
      expect(remaining, key).toBeGreaterThan(0);
      expect(remaining, key).toBeLessThanOrEqual(ttl);
    }
  });

  it("should leave no key behind when updating a session that does not exist", async () => {
    const prefix = `ghost:${randomUUID()}:`;
    const store = makeStore({ prefix });
    await store.sessions.update("ghost", { logLevel: "debug", subscriptions: ["a://b"] });
    expect(await connection().keys(`${prefix}*`)).toEqual([]);
  });

  it("should publish and subscribe on prefixed channels", async () => {
    const prefix = `chan:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    const received: BusMessage[] = [];
    await store.bus.subscribe("changes", (message) => received.push(message));
    expect(await inspector.publish(`${prefix}changes`, JSON.stringify({ from: "outside" }))).toBe(
      1,
    );
    await inspector.publish(`${prefix}changes`, "not json"); // ignored, not thrown
    await store.bus.publish("changes", "inside");
    await vi.waitFor(() => expect(received).toEqual([{ from: "outside" }, "inside"]));
  });

  it("should keep a lease under its scope's hash tag, with its ttl", async () => {
    const prefix = `lease:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    await store.leases.acquire("AbC_-12/stream1", "process-a", 60_000);
    const key = `${prefix}{s:AbC_-12}:lease:stream1`;
    expect(await inspector.keys(`${prefix}*`)).toEqual([key]);
    expect(await inspector.get(key)).toBe("process-a");
    const remaining = await inspector.pttl(key);
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(60_000);
    await store.leases.release("AbC_-12/stream1", "process-a");
    expect(await inspector.keys(`${prefix}*`)).toEqual([]);
  });

  it("should keep an event type's keys under its tag, and the delivery queue under its own", async () => {
    const prefix = `events:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    const retain = { maxLen: 1, maxAgeMs: 60_000 };
    await store.feeds!.append("order.paid", { n: 1 }, retain, "k1");
    await store.feeds!.append("order.paid", { n: 2 }, retain);
    await store.webhooks!.put(
      {
        id: "sub1",
        name: "order.paid",
        principal: "p",
        url: "https://example.com/",
        arguments: {},
        secrets: [],
        createdAt: 1,
        expiresAt: Date.now() + 60_000,
        active: true,
        from: "0-0",
        version: 1,
      },
      0,
    );
    const job = { name: "order.paid", subscription: "sub1", webhookId: "e1", body: "{}" };
    const position = "1-0";
    await store.deliveries!.enqueue(
      [{ id: "sub1:e1", ...job, attempt: 0, createdAt: 1, position }],
      0,
    );
    const tag = `${prefix}{ev:order.paid}`;
    expect((await inspector.keys(`${prefix}*`)).sort()).toEqual(
      [
        `${tag}:feed`,
        `${tag}:trimmed`,
        `${tag}:dedup:k1`,
        `${tag}:hook:sub1`,
        `${tag}:hooks`,
        `${prefix}{deliveries}:due`,
        `${prefix}{deliveries}:jobs`,
        `${prefix}{deliveries}:owed`,
        `${prefix}{deliveries}:owed-by`,
      ].sort(),
    );
    expect(await inspector.xlen(`${tag}:feed`)).toBe(1);
    // A feed is kept short by trimming, not by a TTL; what lapses has one.
    expect(await inspector.pttl(`${tag}:feed`)).toBe(-1);
    for (const key of [`${tag}:dedup:k1`, `${tag}:hook:sub1`]) {
      expect(await inspector.pttl(key), key).toBeGreaterThan(0);
      expect(await inspector.pttl(key), key).toBeLessThanOrEqual(60_000);
    }
  });

  it("should carry a sharded channel by SSUBSCRIBE and SPUBLISH, under its shard's hash tag", async () => {
    const prefix = `shard:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    const name = `${prefix}{s:AbC_-12}:session`;
    const received: BusMessage[] = [];
    await store.bus.subscribe("session", (message) => received.push(message), "AbC_-12");
    expect(await inspector.pubsub("SHARDNUMSUB", name)).toEqual([name, 1]);
    expect(await inspector.pubsub("NUMSUB", name)).toEqual([name, 0]);
    expect(await inspector.spublish(name, JSON.stringify("from outside"))).toBe(1);
    await store.bus.publish("session", "inside", "AbC_-12");
    await vi.waitFor(() => expect(received).toEqual(["from outside", "inside"]));
  });

  it("should fall back to SUBSCRIBE and PUBLISH for sharded channels when Redis refuses them", async () => {
    // An ACL user without sharded pub/sub: Redis refuses it as a Redis before 7 does. (Left on
    // this file's private server: deleting it would cut the connections before they quit.)
    const admin = connection();
    const user = `old-${randomUUID()}`;
    await admin.acl(
      "SETUSER",
      user,
      "on",
      "nopass",
      "~*",
      "&*",
      "+@all",
      "-ssubscribe",
      "-spublish",
    );
    const prefix = `old:${randomUUID()}:`;
    const [store, peer] = [1, 2].map(() =>
      makeStore({ prefix, redis: connection({ username: user }) }),
    );
    const received: BusMessage[] = [];
    await store!.bus.subscribe("session", (message) => received.push(message), "s1");
    const name = `${prefix}{s:s1}:session`;
    expect(await admin.pubsub("NUMSUB", name)).toEqual([name, 1]);
    await peer!.bus.publish("session", "one", "s1");
    await peer!.bus.publish("session", "two", "s1");
    await vi.waitFor(() => expect(received).toEqual(["one", "two"]));
  });

  it("should WAIT for replicas after a session's creation and deletion, a lease's acquisition and Events writes, only", async () => {
    const prefix = `wait:${randomUUID()}:`;
    const store = makeStore({ prefix, waitReplicas: 1, waitTimeoutMs: 20 });
    const monitor = await startMonitor(server.url);
    const inspector = connection();
    const waits: string[] = [];
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === "wait") waits.push(args.join(" "));
      if (args[0]?.toLowerCase() === "echo") waits.push("marker");
    });
    try {
      // No replica here: each WAIT times out, and the operation still resolves.
      await store.sessions.create(sessionRecord("s1"), 10);
      await store.sessions.get("s1");
      await store.sessions.update("s1", { logLevel: "info" });
      expect(await store.leases.acquire("s1/get", "a", 60_000)).toBe(true);
      expect(await store.leases.acquire("s1/get", "b", 60_000)).toBe(false); // nothing written
      await store.leases.renew("s1/get", "a", 60_000);
      expect(await store.sessions.delete("s1")).toBe(true);
      // Events: an append, a subscription's write and deletion, an enqueue.
      await store.feeds!.append("e", { n: 1 }, { maxLen: 10, maxAgeMs: 60_000 });
      await store.feeds!.read("e", "0-0", 10);
      const hook = {
        id: "h1",
        name: "e",
        principal: "p",
        url: "https://example.com/",
        arguments: {},
        secrets: [],
        createdAt: 1,
        expiresAt: null,
        active: true,
        from: "0-0",
        version: 1,
      };
      expect(await store.webhooks!.put(hook, 0)).toBe(true);
      expect(await store.webhooks!.put(hook, 0)).toBe(false); // nothing written
      expect(await store.webhooks!.delete("e", "h1")).toBe(true);
      const job = { id: "j1", name: "e", subscription: "h1", webhookId: "w", body: "{}" };
      await store.deliveries!.enqueue([{ ...job, attempt: 0, createdAt: 1 }], 0);
      await store.deliveries!.claim(10, 60_000);
      await store.deliveries!.complete("j1");
      await inspector.echo("marker");
      await vi.waitFor(() => expect(waits.at(-1)).toBe("marker"));
      expect(waits).toEqual([...Array(7).fill("wait 1 20"), "marker"]);
    } finally {
      monitor.disconnect();
    }
  });

  it("should send one SUBSCRIBE per channel and UNSUBSCRIBE when its last listener leaves", async () => {
    const prefix = `sub:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    const subscribers = async () => (await inspector.pubsub("NUMSUB", `${prefix}news`))[1];
    const stops = await Promise.all([1, 2, 3].map(() => store.bus.subscribe("news", () => {})));
    expect(await subscribers()).toBe(1);
    // PUBLISH counts subscribed connections: one per store (process), however many listeners.
    expect(await store.bus.publish("news", "one store")).toBe(1);
    const other = makeStore({ prefix });
    await other.bus.subscribe("news", () => {});
    expect(await store.bus.publish("news", "two stores")).toBe(2);
    await stops[0]!();
    await stops[1]!();
    expect(await subscribers()).toBe(2);
    await stops[2]!();
    expect(await subscribers()).toBe(1); // the other store's
    expect(await store.bus.publish("news", "other store only")).toBe(1);
  });

  it("should send the appends of one turn as one script, keeping each log in order and capped", async () => {
    const prefix = `batch:${randomUUID()}:`;
    const store = makeStore({ prefix, maxEventsPerStream: 3 });
    const monitor = await startMonitor(server.url);
    const inspector = connection();
    const commands: string[] = [];
    // Commands the client sent; those a script ran inside Redis come from "lua".
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua" && args.some((arg) => arg.startsWith(prefix)))
        commands.push(args[0]!.toLowerCase());
    });
    try {
      // Loads the script (EVALSHA, and EVAL unless loaded already), so what follows is counted
      // warm; MONITOR lags, so a marker shows when everything before it was seen.
      await store.events.append("warm/g", { id: "g.1", message: {} });
      await inspector.echo(`${prefix}marker`);
      await vi.waitFor(() => expect(commands.at(-1)).toBe("echo"));
      commands.length = 0;
      const streams = Array.from({ length: 50 }, (_, i) => `s${i}/g${i}`);
      const change = { jsonrpc: "2.0", method: "notifications/tools/list_changed" };
      // One change to every stream (one message object), then a second turn of distinct events.
      await Promise.all(
        streams.map((s, i) => store.events.append(s, { id: `g${i}.1`, message: change })),
      );
      await Promise.all(
        streams.map((s, i) => store.events.append(s, { id: `g${i}.2`, message: { n: i } })),
      );
      await vi.waitFor(() => expect(commands).toEqual(["evalsha", "evalsha"]));
      for (const [i, stream] of streams.entries()) {
        expect(await store.events.after(stream, `g${i}.1`)).toEqual([
          { id: `g${i}.2`, message: { n: i } },
        ]);
      }
      const one = streams[0]!;
      await Promise.all(
        [3, 4, 5].map((n) => store.events.append(one, { id: `g0.${n}`, message: { n } })),
      );
      // Capped at 3: the first two events are gone, the rest in order.
      expect(await store.events.after(one, "g0.1")).toBeUndefined();
      expect(await store.events.after(one, "g0.3")).toEqual([
        { id: "g0.4", message: { n: 4 } },
        { id: "g0.5", message: { n: 5 } },
      ]);
    } finally {
      monitor.disconnect();
    }
  });

  it("should send the unmarks of one turn as one script, never one a mark taken again cancelled", async () => {
    const prefix = `unmarks:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const monitor = await startMonitor(server.url);
    const inspector = connection();
    const commands: string[][] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua" && args.some((arg) => arg.startsWith(prefix))) commands.push(args);
    });
    const seen = async () => {
      await inspector.echo(`${prefix}marker`);
      await vi.waitFor(() => expect(commands.at(-1)?.[0]).toBe("echo"));
      return commands.splice(0).slice(0, -1);
    };
    try {
      const ids = ["a", "b", "c"];
      for (const id of ids) {
        await store.sessions.create(sessionRecord(id), 10);
        await store.sessions.markActive(id, "p1");
      }
      // Loads the touch's script, so what follows is counted warm.
      await store.sessions.touch("b", { activeFor: "p1" });
      await seen();

      // Three sessions let go of in one turn: one command; b marked again at once keeps its mark.
      await Promise.all([
        store.sessions.unmarkActive("a", "p1"),
        store.sessions.unmarkActive("b", "p1"),
        store.sessions.unmarkActive("c", "p1"),
        store.sessions.touch("b", { activeFor: "p1" }),
      ]);
      const sent = await seen();
      expect(sent.map((args) => args[0]!.toLowerCase())).toEqual(["evalsha", "eval"]);
      const unmark = sent.find((args) => args.includes(`${prefix}{s:a}:active`))!;
      expect(unmark.slice(3)).toEqual([
        `${prefix}{s:a}:active`,
        `${prefix}{s:c}:active`,
        "p1",
        "p1",
      ]);
      expect(await store.sessions.activeOwners("a")).toEqual([]);
      expect(await store.sessions.activeOwners("b")).toEqual(["p1"]);
      expect(await store.sessions.activeOwners("c")).toEqual([]);

      // One alone is a plain SREM; a read of the marks in the same turn sees it gone.
      await store.sessions.markActive("a", "p1");
      await seen();
      const unmarked = store.sessions.unmarkActive("a", "p1");
      expect(await store.sessions.activeOwners("a")).toEqual([]);
      await unmarked;
      expect((await seen()).map((args) => args[0]!.toLowerCase())).toEqual(["srem", "smembers"]);
    } finally {
      monitor.disconnect();
    }
  });

  it("should evict stale index entries before live sessions, and forget them on get", async () => {
    const prefix = `stale:${randomUUID()}:`;
    const store = makeStore({ prefix });
    const inspector = connection();
    for (const id of ["gone", "also-gone", "live"])
      await store.sessions.create(sessionRecord(id), 3);
    // Records lost behind the store's back (a failover, a manual DEL): their index entries stay.
    await inspector.del(`${prefix}{s:gone}:rec`, `${prefix}{s:also-gone}:rec`);
    expect(await store.sessions.get("also-gone")).toBeUndefined();
    expect(await inspector.zrange(`${prefix}sessions`, "0", "-1")).toEqual(["gone", "live"]);
    await store.sessions.create(sessionRecord("new"), 2);
    expect(await inspector.zrange(`${prefix}sessions`, "0", "-1")).toEqual(["live", "new"]);
    expect(await store.sessions.get("live")).toBeDefined();
  });

  it("should subscribe at once when the connection does not queue commands", async () => {
    // Made before either connection is ready: the pub/sub connection waits until it is.
    const redis = connection({ enableOfflineQueue: false });
    const store = makeStore({ redis });
    const received: BusMessage[] = [];
    await store.bus.subscribe("news", (message) => received.push(message));
    await ready(redis);
    await store.bus.publish("news", "hello");
    await vi.waitFor(() => expect(received).toEqual(["hello"]));
  });

  it("should quit the pub/sub connection it opened, and leave the caller's open", async () => {
    const name = `owner-${randomUUID()}`;
    const redis = await ready(connection({ connectionName: name }));
    const inspector = connection();
    const named = async () =>
      String(await inspector.client("LIST"))
        .split("\n")
        .filter((line) => line.includes(` name=${name} `)).length;
    const store = makeStore({ redis });
    expect(await named()).toBe(1); // opened only on first subscribe
    await store.bus.subscribe("news", () => {});
    expect(await named()).toBe(2);
    await store.close();
    await store.close();
    await vi.waitFor(async () => expect(await named()).toBe(1));
    expect(await redis.ping()).toBe("PONG");
    await expect(store.bus.subscribe("news", () => {})).rejects.toThrow(/closed/);
  });

  it("should unsubscribe from a subscriber it was given, and not quit it", async () => {
    const prefix = `given:${randomUUID()}:`;
    const subscriber = connection();
    const inspector = connection();
    const store = makeStore({ prefix, subscriber });
    await store.bus.subscribe("news", () => {});
    expect(await inspector.pubsub("NUMSUB", `${prefix}news`)).toEqual([`${prefix}news`, 1]);
    await store.close();
    expect(await inspector.pubsub("NUMSUB", `${prefix}news`)).toEqual([`${prefix}news`, 0]);
    expect(subscriber.status).toBe("ready");
  });

  it("should refuse a prefix with a hash tag and non-positive sizes at construction", () => {
    const redis = connection();
    expect(() => redisStore({ redis, prefix: "{app}:" })).toThrow(/prefix/);
    expect(() => redisStore({ redis, sessionIdleMs: 0 })).toThrow(/sessionIdleMs/);
    expect(() => redisStore({ redis, maxEventsPerStream: 1.5 })).toThrow(/maxEventsPerStream/);
    expect(() => redisStore({ redis, waitReplicas: -1 })).toThrow(/waitReplicas/);
  });
});

describe.each([
  ["enableOfflineQueue: false", { enableOfflineQueue: false }],
  ["maxRetriesPerRequest: 1", { maxRetriesPerRequest: 1 }],
] as const)("redisStore while Redis is down (%s)", (_, options) => {
  it("should reject every operation with a clear error, then work again once Redis is back", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const redis = await ready(connection({ ...options, retryStrategy: () => 50 }));
      redis.on("error", () => {}); // the outage is expected
      const store = makeStore({ redis, prefix: `down:${randomUUID()}:` });
      const received: BusMessage[] = [];
      await store.bus.subscribe("news", (message) => received.push(message));
      await store.sessions.create(sessionRecord("s1"), 10);

      await server.stop();
      try {
        await vi.waitFor(() => expect(redis.status).not.toBe("ready"));
        const attempts = Object.entries({
          "sessions.create": store.sessions.create(sessionRecord("s2"), 10),
          "sessions.get": store.sessions.get("s1"),
          "sessions.update": store.sessions.update("s1", { logLevel: "info" }),
          "sessions.delete": store.sessions.delete("s1"),
          "events.append": store.events.append("s1/a", { id: "a.1", message: {} }),
          "events.after": store.events.after("s1/a", "a.1"),
          "events.drop": store.events.drop("s1/a"),
          "nonces.claim": store.nonces.claim("n", 1_000),
          "bus.publish": store.bus.publish("news", "lost"),
          "bus.subscribe": store.bus.subscribe("other", () => {}),
        });
        const outcomes = await Promise.allSettled(attempts.map(([, attempt]) => attempt));
        outcomes.forEach((outcome, i) => {
          const operation = attempts[i]![0];
          expect(outcome.status, operation).toBe("rejected");
          if (outcome.status === "rejected")
            expect(String(outcome.reason), operation).toMatch(`Redis store: ${operation} failed: `);
        });
      } finally {
        await server.start();
      }

      // The same store, untouched: ioredis reconnects, and resubscribes its channels.
      await vi.waitFor(() => expect(redis.status).toBe("ready"), { timeout: 5_000 });
      await store.sessions.create(sessionRecord("s3"), 10);
      expect((await store.sessions.get("s3"))?.id).toBe("s3");
      await store.events.append("s3/a", { id: "a.1", message: {} });
      expect(await store.events.after("s3/a", "a.1")).toEqual([]);
      expect(await store.nonces.claim("n", 1_000)).toBe(true);
      await vi.waitFor(
        async () => {
          await store.bus.publish("news", "back");
          expect(received).toContain("back");
        },
        { timeout: 5_000, interval: 50 },
      );
      const later: BusMessage[] = [];
      await store.bus.subscribe("other", (message) => later.push(message));
      await store.bus.publish("other", "works");
      await vi.waitFor(() => expect(later).toEqual(["works"]));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
