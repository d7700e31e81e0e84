import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { channel, publish, subscribe } from "../../src/store/channels.js";
import type {
  BusMessage,
  LoggedEvent,
  McpStore,
  SessionRecord,
  TaskRecord,
} from "../../src/store/types.js";
import { sleep } from "../helpers/sleep.js";
import { describeEventsStoreContract } from "./contract-events.js";

/** A store under test, with what it takes to tear it down. */
export interface StoreFixture {
  store: McpStore;
  /**
   * The same backend opened a second time, on its own connections, as another process would
   * open it. A store that cannot span processes leaves it out and plays both parts itself.
   */
  peer?: McpStore;
  cleanup(): Promise<void>;
}

/** Options every store under contract must be made with: short clocks and a small cap. */
export const CONTRACT_OPTIONS = { sessionIdleMs: 600, maxEventsPerStream: 5 } as const;

const IDLE = CONTRACT_OPTIONS.sessionIdleMs;
const WAIT = { timeout: 3_000, interval: 5 };

/** A listener that records what it receives. */
function recorder() {
  const received: BusMessage[] = [];
  return { received, listener: (message: BusMessage) => void received.push(message) };
}

function sessionRecord(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    protocolVersion: "2025-06-18",
    clientInfo: { name: "client", version: "1.0.0", tags: [] },
    capabilities: { elicitation: {}, roots: { listChanged: true } },
    subscriptions: [],
    principal: "",
    createdAt: 1_767_225_600_123,
    ...overrides,
  };
}

function taskRecord(id: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id,
    principal: "https://issuer|alice",
    status: "working",
    createdAt: Date.now(),
    lastUpdatedAt: Date.now(),
    ttlMs: 60_000,
    pollIntervalMs: 500,
    inputRequests: {},
    inputResponses: { earlier: { action: "accept", content: { tags: [] } } },
    version: 1,
    ...overrides,
  };
}

function event(n: number): LoggedEvent {
  return {
    id: `s1.${n}`,
    message: { jsonrpc: "2.0", method: "notifications/message", params: { n } },
  };
}

/**
 * The contract of `McpStore` (src/store/types.ts) that every implementation passes. `makeStore`
 * runs before each test and must build its stores with {@link CONTRACT_OPTIONS}.
 */
export function describeStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} (store contract)`, () => {
    let fixture: StoreFixture;
    let store: McpStore;
    let peer: McpStore;
    let unique = 0;
    /** A fresh id per test, so no test sees another's data. */
    const id = (label: string) => `${label}-${Date.now().toString(36)}-${++unique}`;

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      peer = fixture.peer ?? fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    describe("nonces", () => {
      it("should grant a claim only the first time, to whichever process asks", async () => {
        const key = id("nonce");
        expect(await store.nonces.claim(key, 60_000)).toBe(true);
        expect(await store.nonces.claim(key, 60_000)).toBe(false);
        expect(await peer.nonces.claim(key, 60_000)).toBe(false);
        expect(await peer.nonces.claim(id("other"), 60_000)).toBe(true);
      });

      it("should grant a claim again once its ttl has passed", async () => {
        const key = id("nonce");
        expect(await store.nonces.claim(key, 100)).toBe(true);
        expect(await store.nonces.claim(key, 100)).toBe(false);
        // The claim's ttl runs out: the store's own expiry is under test, Redis's included.
        await sleep(300);
        expect(await peer.nonces.claim(key, 100)).toBe(true);
      });
    });

    describe("bus", () => {
      it("should fan a message out to every listener of its channel, from another process", async () => {
        const channel = id("news");
        const [a, b] = [recorder(), recorder()];
        await store.bus.subscribe(channel, a.listener);
        await store.bus.subscribe(channel, b.listener);
        // subscribe() resolved, so the subscription is live: a publish right now must arrive.
        await peer.bus.publish(channel, { n: 1 });
        await vi.waitFor(() => expect(b.received).toEqual([{ n: 1 }]), WAIT);
        expect(a.received).toEqual([{ n: 1 }]);
      });

      it("should keep channels apart", async () => {
        const [one, two] = [id("one"), id("two")];
        const [a, b] = [recorder(), recorder()];
        await store.bus.subscribe(one, a.listener);
        await store.bus.subscribe(two, b.listener);
        await peer.bus.publish(one, "to one");
        await peer.bus.publish(two, "to two");
        // No order across channels (on a Cluster they travel by different nodes): wait for both.
        await vi.waitFor(() => expect(b.received).toEqual(["to two"]), WAIT);
        await vi.waitFor(() => expect(a.received).toEqual(["to one"]), WAIT);
      });

      it("should stop delivering to a listener that unsubscribed, and keep its neighbours", async () => {
        const channel = id("news");
        const [a, b, witness] = [recorder(), recorder(), recorder()];
        const stopA = await store.bus.subscribe(channel, a.listener);
        const stopB = await store.bus.subscribe(channel, b.listener);
        await stopA();
        await stopA(); // twice is harmless
        await peer.bus.publish(channel, "first");
        await vi.waitFor(() => expect(b.received).toEqual(["first"]), WAIT);
        expect(a.received).toEqual([]);

        await stopB();
        // A witness on the same channel of the same store: a message reaches a store's listeners
        // of one channel together, so once the witness has it, b would have had it too.
        await store.bus.subscribe(channel, witness.listener);
        await peer.bus.publish(channel, "second");
        await vi.waitFor(() => expect(witness.received).toEqual(["second"]), WAIT);
        expect(a.received).toEqual([]);
        expect(b.received).toEqual(["first"]);
      });

      it("should deliver JSON values intact", async () => {
        const channel = id("json");
        const messages = [
          { text: 'héllo ✓ "quoted"\n', n: -1.5, max: 2 ** 53 - 1, yes: true, none: null },
          { list: [1, "two", null, [], {}], nested: { deep: { empty: [] } } },
          "a string",
          42,
          null,
          [],
        ];
        const r = recorder();
        await store.bus.subscribe(channel, r.listener);
        for (const message of messages) await peer.bus.publish(channel, message);
        await vi.waitFor(() => expect(r.received).toHaveLength(messages.length), WAIT);
        // An un-sharded channel promises no order on a Cluster: each PUBLISH may enter by
        // another node (the sharded channel's test below asserts order).
        expect(r.received).toEqual(expect.arrayContaining(messages));
      });

      it("should deliver to the other listeners when one throws", async () => {
        const channel = id("news");
        const r = recorder();
        await store.bus.subscribe(channel, () => {
          throw new Error("listener failed");
        });
        await store.bus.subscribe(channel, r.listener);
        await peer.bus.publish(channel, "still delivered");
        await vi.waitFor(() => expect(r.received).toEqual(["still delivered"]), WAIT);
      });

      it("should let a channel be subscribed again after its last listener left", async () => {
        const channel = id("news");
        const [a, b] = [recorder(), recorder()];
        const stop = await store.bus.subscribe(channel, a.listener);
        await stop();
        await store.bus.subscribe(channel, b.listener);
        await peer.bus.publish(channel, "again");
        await vi.waitFor(() => expect(b.received).toEqual(["again"]), WAIT);
        expect(a.received).toEqual([]);
      });
    });

    describe("sharded bus", () => {
      it("should deliver a sharded channel's messages from another process, in publish order", async () => {
        const session = id("session");
        const r = recorder();
        await store.bus.subscribe("session", r.listener, session);
        const sent = Array.from({ length: 30 }, (_, n) => ({ n }));
        // Sent back to back, not one at a time: order is the bus's, not the awaits'.
        await Promise.all(sent.map((message) => peer.bus.publish("session", message, session)));
        await vi.waitFor(() => expect(r.received).toHaveLength(sent.length), WAIT);
        expect(r.received).toEqual(sent);
      });

      it("should keep a sharded channel apart from other shards and from its un-sharded namesake", async () => {
        const [one, two] = [id("session"), id("session")];
        const [a, b, plain] = [recorder(), recorder(), recorder()];
        await store.bus.subscribe("news", a.listener, one);
        await store.bus.subscribe("news", b.listener, two);
        await store.bus.subscribe("news", plain.listener);
        await peer.bus.publish("news", "to one", one);
        await peer.bus.publish("news", "to two", two);
        await peer.bus.publish("news", "to all");
        await vi.waitFor(() => expect(a.received).toEqual(["to one"]), WAIT);
        await vi.waitFor(() => expect(b.received).toEqual(["to two"]), WAIT);
        await vi.waitFor(() => expect(plain.received).toEqual(["to all"]), WAIT);
      });

      it("should stop delivering on a sharded channel once unsubscribed, and subscribe it again", async () => {
        const session = id("session");
        const [a, b] = [recorder(), recorder()];
        const stop = await store.bus.subscribe("session", a.listener, session);
        await peer.bus.publish("session", "first", session);
        await vi.waitFor(() => expect(a.received).toEqual(["first"]), WAIT);
        await stop();
        await store.bus.subscribe("session", b.listener, session);
        await peer.bus.publish("session", "second", session);
        // One channel, one store: once b has "second", a would have had it too.
        await vi.waitFor(() => expect(b.received).toEqual(["second"]), WAIT);
        expect(a.received).toEqual(["first"]);
      });

      it("should keep delivering plain channels after the last sharded one is unsubscribed, and the reverse", async () => {
        // On one connection Redis counts the two kinds apart; a client that reads an
        // unsubscribe's count of 0 as the end of all its subscriptions goes deaf to the other.
        const session = id("session");
        const [plain, sharded] = [recorder(), recorder()];
        await store.bus.subscribe("news", plain.listener);
        const stopSharded = await store.bus.subscribe("session", () => undefined, session);
        await stopSharded();
        await peer.bus.publish("news", "after the sharded one left");
        await vi.waitFor(
          () => expect(plain.received).toEqual(["after the sharded one left"]),
          WAIT,
        );

        const other = id("session");
        await store.bus.subscribe("session", sharded.listener, other);
        const stopPlain = await store.bus.subscribe(id("plain"), () => undefined);
        await stopPlain();
        await peer.bus.publish("session", "after a plain one left", other);
        await vi.waitFor(() => expect(sharded.received).toEqual(["after a plain one left"]), WAIT);
      });

      it("should carry a typed channel's shard through publish and subscribe", async () => {
        const session = id("session");
        const typed = channel<{ t: string }>("session", session);
        const [sharded, plain] = [recorder(), recorder()];
        await subscribe(store.bus, typed, sharded.listener);
        await subscribe(store.bus, channel<{ t: string }>("session"), plain.listener);
        await publish(peer.bus, typed, { t: "end" });
        await store.bus.publish("session", { t: "plain" });
        await vi.waitFor(() => expect(sharded.received).toEqual([{ t: "end" }]), WAIT);
        await vi.waitFor(() => expect(plain.received).toEqual([{ t: "plain" }]), WAIT);
      });
    });

    describe("leases", () => {
      it("should give a free lease to one owner and refuse it to others, from any process", async () => {
        const key = `${id("session")}/get`;
        expect(await store.leases.holder(key)).toBeUndefined();
        expect(await store.leases.acquire(key, "a", 60_000)).toBe(true);
        expect(await peer.leases.holder(key)).toBe("a");
        expect(await peer.leases.acquire(key, "b", 60_000)).toBe(false);
        expect(await store.leases.holder(key)).toBe("a");
        // Its holder acquiring again keeps it.
        expect(await peer.leases.acquire(key, "a", 60_000)).toBe(true);
        expect(await store.leases.holder(key)).toBe("a");
      });

      it("should give a lease to exactly one of two owners acquiring it at once", async () => {
        const key = `${id("session")}/get`;
        const outcomes = await Promise.all([
          store.leases.acquire(key, "a", 60_000),
          peer.leases.acquire(key, "b", 60_000),
        ]);
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        expect(await store.leases.holder(key)).toBe(outcomes[0] ? "a" : "b");
      });

      it("should renew only its holder's lease", async () => {
        const key = `${id("session")}/get`;
        expect(await store.leases.renew(key, "a", 60_000)).toBe(false); // never taken
        await store.leases.acquire(key, "a", 60_000);
        expect(await peer.leases.renew(key, "a", 60_000)).toBe(true);
        expect(await peer.leases.renew(key, "b", 60_000)).toBe(false);
        expect(await store.leases.holder(key)).toBe("a");
      });

      it("should release only its holder's lease, which any owner may then take", async () => {
        const key = `${id("session")}/get`;
        await store.leases.acquire(key, "a", 60_000);
        expect(await peer.leases.release(key, "b")).toBe(false);
        expect(await store.leases.holder(key)).toBe("a");
        expect(await peer.leases.release(key, "a")).toBe(true);
        expect(await store.leases.holder(key)).toBeUndefined();
        expect(await store.leases.release(key, "a")).toBe(false);
        expect(await store.leases.renew(key, "a", 60_000)).toBe(false);
        expect(await peer.leases.acquire(key, "b", 60_000)).toBe(true);
        expect(await store.leases.holder(key)).toBe("b");
      });

      it("should free a lease its holder stopped renewing once its ttl has passed", async () => {
        const key = `${id("session")}/get`;
        expect(await store.leases.acquire(key, "a", 200)).toBe(true);
        // The lease's ttl runs out: the store's own expiry is under test, Redis's included.
        await sleep(350);
        expect(await peer.leases.holder(key)).toBeUndefined();
        expect(await store.leases.renew(key, "a", 60_000)).toBe(false);
        expect(await peer.leases.acquire(key, "b", 60_000)).toBe(true);
      });

      it("should keep a renewed lease past its first ttl", async () => {
        const key = `${id("session")}/get`;
        const again = `${id("session")}/get`;
        await store.leases.acquire(key, "a", 300);
        await store.leases.acquire(again, "a", 300);
        expect(await peer.leases.renew(key, "a", 60_000)).toBe(true);
        expect(await peer.leases.acquire(again, "a", 60_000)).toBe(true); // extends, too
        // Past the first ttl, which real time must cover.
        await sleep(450);
        expect(await store.leases.holder(key)).toBe("a");
        expect(await store.leases.holder(again)).toBe("a");
      });

      it("should keep leases of different names and scopes apart", async () => {
        const [one, two] = [id("session"), id("session")];
        await store.leases.acquire(`${one}/get`, "a", 60_000);
        expect(await peer.leases.acquire(`${one}/post`, "b", 60_000)).toBe(true);
        expect(await peer.leases.acquire(`${two}/get`, "c", 60_000)).toBe(true);
        expect(await peer.leases.acquire(one, "d", 60_000)).toBe(true); // a scope alone
        expect(await store.leases.holder(`${one}/get`)).toBe("a");
        expect(await store.leases.holder(`${one}/post`)).toBe("b");
        expect(await store.leases.holder(`${two}/get`)).toBe("c");
        expect(await store.leases.holder(one)).toBe("d");
      });
    });

    describe("sessions", () => {
      it("should store a record that every process reads back whole", async () => {
        const record = sessionRecord(id("session"), { logLevel: "info", subscriptions: ["a://1"] });
        await store.sessions.create(record, 100);
        expect(await peer.sessions.get(record.id)).toEqual({ ...record, revision: 0 });
        expect(await store.sessions.get(record.id)).toEqual({ ...record, revision: 0 });
      });

      it("should not know a session that was never created", async () => {
        expect(await store.sessions.get(id("unknown"))).toBeUndefined();
      });

      it("should apply updates to the mutable fields", async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create(record, 100);
        await peer.sessions.update(record.id, { logLevel: "warning" });
        await store.sessions.update(record.id, { subscriptions: ["file:///a", "file:///b"] });
        expect(await store.sessions.get(record.id)).toEqual({
          ...record,
          logLevel: "warning",
          subscriptions: ["file:///a", "file:///b"],
          revision: 2,
        });
        await store.sessions.update(record.id, { subscriptions: [] });
        expect((await peer.sessions.get(record.id))?.subscriptions).toEqual([]);
      });

      it("should keep both of two concurrent updates of different fields", async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create(record, 100);
        await Promise.all([
          store.sessions.update(record.id, { logLevel: "error" }),
          peer.sessions.update(record.id, { subscriptions: ["file:///x"] }),
        ]);
        const stored = await store.sessions.get(record.id);
        expect(stored?.logLevel).toBe("error");
        expect(stored?.subscriptions).toEqual(["file:///x"]);
      });

      it("should not bring a session back by updating it", async () => {
        const unknown = id("unknown");
        await store.sessions.update(unknown, { logLevel: "debug" });
        expect(await store.sessions.get(unknown)).toBeUndefined();
      });

      it("should delete a session once: true, then false", async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create(record, 100);
        expect(await peer.sessions.delete(record.id)).toBe(true);
        expect(await store.sessions.get(record.id)).toBeUndefined();
        expect(await store.sessions.delete(record.id)).toBe(false);
        expect(await store.sessions.delete(id("unknown"))).toBe(false);
        await store.sessions.update(record.id, { logLevel: "debug" });
        expect(await peer.sessions.get(record.id)).toBeUndefined();
      });

      it("should expire a session left idle", async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create(record, 100);
        // The idle time runs out; polling could not tell an expiry on time from a late one.
        await sleep(IDLE + 300);
        expect(await peer.sessions.exists(record.id)).toBe(false);
        expect(await peer.sessions.get(record.id)).toBeUndefined();
      });

      it("should tell whether a session exists without keeping it alive", async () => {
        const record = sessionRecord(id("session"));
        expect(await store.sessions.exists(record.id)).toBe(false);
        await store.sessions.create(record, 100);
        // Checking more often than the idle time must not reset the idle clock.
        for (let i = 0; i < 3; i++) {
          expect(await peer.sessions.exists(record.id), `check ${i}`).toBe(true);
          // Checks spread over the idle time, which real time must cover.
          await sleep(IDLE / 3);
        }
        // Created about IDLE ago and never read: it expires on schedule, which takes real time.
        await sleep(300);
        expect(await store.sessions.exists(record.id)).toBe(false);
      });

      it("should touch a live session for any process, and say when it is gone", async () => {
        const record = sessionRecord(id("session"));
        expect(await store.sessions.touch(record.id)).toBe(false);
        await store.sessions.create(record, 100);
        expect(await peer.sessions.touch(record.id)).toBe(0);
        expect(await store.sessions.delete(record.id)).toBe(true);
        expect(await peer.sessions.touch(record.id)).toBe(false);
        // A touch never brings a session back.
        expect(await store.sessions.get(record.id)).toBeUndefined();
      });

      it("should answer a session's revision, bumped by every update, on every process", async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create({ ...record, revision: 7 }, 100);
        // A copy kept in memory is checked against this: what create was given does not count.
        expect((await peer.sessions.get(record.id))?.revision).toBe(0);
        expect(await peer.sessions.touch(record.id)).toBe(0);
        await store.sessions.update(record.id, { logLevel: "warning" });
        expect(await peer.sessions.touch(record.id)).toBe(1);
        await peer.sessions.update(record.id, { subscriptions: ["test://a"] });
        expect(await store.sessions.touch(record.id)).toBe(2);
        expect(await store.sessions.get(record.id)).toMatchObject({
          logLevel: "warning",
          subscriptions: ["test://a"],
          revision: 2,
        });
        // A touch changes nothing a copy holds.
        expect(await store.sessions.touch(record.id)).toBe(2);
      });

      it("should reset the idle clock on every touch", { retry: 2 }, async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create(record, 100);
        // Touched more often than the idle time: alive well past it.
        for (let i = 0; i < 4; i++) {
          await sleep(IDLE / 3);
          expect(await peer.sessions.touch(record.id), `touch ${i}`).toEqual(expect.any(Number));
        }
        expect(await store.sessions.exists(record.id)).toBe(true);
      });

      it("should reset the idle clock on every get", { retry: 2 }, async () => {
        const record = sessionRecord(id("session"));
        await store.sessions.create(record, 100);
        // Four gets a third of the idle time apart: together longer than the idle time.
        for (let i = 0; i < 4; i++) {
          // Gets spread over more than the idle time, which real time must cover.
          await sleep(IDLE / 3);
          expect(await (i % 2 ? store : peer).sessions.get(record.id), `get ${i}`).toBeDefined();
        }
      });

      it("should evict the longest idle sessions beyond maxSessions", async () => {
        const [a, b, c, d] = ["a", "b", "c", "d"].map((label) => sessionRecord(id(label)));
        // A few milliseconds between steps, so each last-use time differs from the one before.
        for (const record of [a, b, c]) {
          await store.sessions.create(record!, 3);
          await sleep(5);
        }
        expect(await peer.sessions.get(a!.id)).toBeDefined(); // now b is the longest idle
        await sleep(5);
        expect(await peer.sessions.create(d!, 3)).toEqual([b!.id]);
        expect(await store.sessions.get(b!.id)).toBeUndefined();
        for (const live of [a, c, d]) expect(await store.sessions.get(live!.id)).toBeDefined();
      });

      it("should order a session used again after a newer one was created", async () => {
        const [a, b, c] = ["a", "b", "c"].map((label) => sessionRecord(id(label)));
        await store.sessions.create(a!, 2);
        await sleep(5);
        expect(await store.sessions.get(a!.id)).toBeDefined(); // a warm session, used again
        await sleep(5);
        await store.sessions.create(b!, 2);
        await sleep(5);
        expect(await peer.sessions.get(a!.id)).toBeDefined(); // a is used after b was created
        await sleep(5);
        expect(await store.sessions.create(c!, 2)).toEqual([b!.id]);
      });

      it("should not count expired sessions against maxSessions", async () => {
        const [a, b, c, d] = ["a", "b", "c", "d"].map((label) => sessionRecord(id(label)));
        await store.sessions.create(a!, 2);
        await store.sessions.create(b!, 2);
        // a and b expire, then c and d are created at different times.
        await sleep(IDLE + 300);
        await store.sessions.create(c!, 2);
        await sleep(5);
        await peer.sessions.create(d!, 2);
        expect(await store.sessions.get(c!.id)).toBeDefined();
        expect(await store.sessions.get(d!.id)).toBeDefined();
      });
    });

    describe("sessions of a client", () => {
      /** Sessions of `client`, created a few milliseconds apart so their last uses differ. */
      const opened = async (client: string | undefined, ...labels: string[]) => {
        const records = labels.map((label) => sessionRecord(id(label), client ? { client } : {}));
        for (const record of records) {
          await store.sessions.create(record, 100);
          await sleep(5);
        }
        return records.map((record) => record.id);
      };

      it("should list a client's own sessions, least recently used first", async () => {
        const alice = id("alice");
        const bob = id("bob");
        const [a, b, c] = await opened(alice, "a", "b", "c");
        const [d] = await opened(bob, "d");
        await opened(undefined, "anonymous");
        expect(await peer.sessions.ofClient(alice)).toEqual([a, b, c]);
        expect(await store.sessions.get(a!, { client: alice })).toBeDefined();
        await sleep(5);
        expect(await peer.sessions.touch(b!, { client: alice })).toEqual(expect.any(Number));
        await sleep(5);
        // Used by another client, or with no client named: its owner's order stays.
        expect(await store.sessions.touch(c!, { client: bob })).toEqual(expect.any(Number));
        expect(await store.sessions.get(c!)).toBeDefined();
        expect(await store.sessions.ofClient(alice)).toEqual([c, a, b]);
        expect(await store.sessions.ofClient(bob)).toEqual([d]);
        expect(await store.sessions.ofClient(id("nobody"))).toEqual([]);
        // Used again while newest, then after a newer session, then after the newest was deleted.
        expect(await store.sessions.touch(b!, { client: alice })).toEqual(expect.any(Number));
        const [e] = await opened(alice, "e");
        expect(await peer.sessions.get(b!, { client: alice })).toBeDefined();
        expect(await store.sessions.ofClient(alice)).toEqual([c, a, e, b]);
        expect(await store.sessions.delete(b!)).toBe(true);
        expect(await peer.sessions.touch(a!, { client: alice })).toEqual(expect.any(Number));
        expect(await store.sessions.ofClient(alice)).toEqual([c, e, a]);
        // Used by another client: its owner's order does not move.
        expect(await store.sessions.get(c!, { client: bob })).toBeDefined();
        expect(await peer.sessions.ofClient(alice)).toEqual([c, e, a]);
      });

      it("should drop a session from its client's once deleted or evicted", async () => {
        const alice = id("alice");
        const [a, b] = await opened(alice, "a", "b");
        expect(await peer.sessions.delete(a!)).toBe(true);
        expect(await store.sessions.ofClient(alice)).toEqual([b]);
        // b is the longest idle of every session: the cap of one evicts it.
        const [c] = await opened(id("bob"), "c");
        const evicted = await peer.sessions.create(sessionRecord(id("d")), 1);
        expect(evicted).toContain(b);
        expect(evicted).toContain(c);
        expect(await store.sessions.ofClient(alice)).toEqual([]);
      });

      it("should forget a client's sessions left idle past their expiry", async () => {
        const alice = id("alice");
        const [a, b] = await opened(alice, "a", "b");
        // a is used along the way, b is not; the idle time runs out for b only.
        for (let i = 0; i < 4; i++) {
          await sleep(IDLE / 3);
          expect(await peer.sessions.touch(a!, { client: alice }), `touch ${i}`).toEqual(
            expect.any(Number),
          );
        }
        expect(await store.sessions.exists(b!)).toBe(false);
        expect(await store.sessions.ofClient(alice)).toEqual([a]);
      });

      it("should keep each owner's mark on a session until unmarked or the session ends", async () => {
        const [a] = await opened(id("alice"), "a");
        await store.sessions.markActive(a!, "p1");
        expect(await peer.sessions.get(a!, { activeFor: "p2" })).toBeDefined();
        expect(await store.sessions.touch(a!, { activeFor: "p3" })).toEqual(expect.any(Number));
        expect((await peer.sessions.activeOwners(a!)).sort()).toEqual(["p1", "p2", "p3"]);
        await peer.sessions.unmarkActive(a!, "p2");
        await store.sessions.unmarkActive(a!, "p9"); // never marked: nothing changes
        expect((await store.sessions.activeOwners(a!)).sort()).toEqual(["p1", "p3"]);
        // Marked again by a later request, unmarked again after it.
        expect(await peer.sessions.touch(a!, { activeFor: "p2" })).toEqual(expect.any(Number));
        expect((await store.sessions.activeOwners(a!)).sort()).toEqual(["p1", "p2", "p3"]);
        await store.sessions.unmarkActive(a!, "p2");
        expect((await peer.sessions.activeOwners(a!)).sort()).toEqual(["p1", "p3"]);
        expect(await store.sessions.delete(a!)).toBe(true);
        expect(await peer.sessions.activeOwners(a!)).toEqual([]);
        // Neither a mark nor a use brings an ended session back, nor marks it.
        const unknown = id("unknown");
        await peer.sessions.markActive(unknown, "p1");
        expect(await store.sessions.touch(unknown, { activeFor: "p1" })).toBe(false);
        expect(await store.sessions.get(unknown, { activeFor: "p1" })).toBeUndefined();
        expect(await store.sessions.activeOwners(unknown)).toEqual([]);
        expect(await store.sessions.exists(unknown)).toBe(false);
      });
    });

    describe("tasks", () => {
      it("should store a task that any process reads back exactly, empty arrays included", async () => {
        const record = taskRecord(id("task"), {
          request: { name: "job", arguments: { list: [] } },
          traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        });
        expect(await store.tasks.create(record, 10)).toBe(true);
        expect(await peer.tasks.get(record.id)).toEqual(record);
        expect(await peer.tasks.get(id("unknown"))).toBeUndefined();
      });

      it("should replace a task only at the expected version", async () => {
        const record = taskRecord(id("task"));
        await store.tasks.create(record, 10);
        const next = { ...record, status: "input_required" as const, version: 2 };
        expect(await peer.tasks.replace(next, 1)).toBe(true);
        const stale = { ...record, status: "completed" as const, version: 2 };
        expect(await store.tasks.replace(stale, 1)).toBe(false);
        expect((await store.tasks.get(record.id))?.status).toBe("input_required");
        expect(await store.tasks.replace(taskRecord(id("gone"), { version: 2 }), 1)).toBe(false);
      });

      it("should keep the creating request's traceparent through replacements", async () => {
        const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        const record = taskRecord(id("task"), { traceparent });
        await store.tasks.create(record, 10);
        await peer.tasks.replace({ ...record, status: "completed", version: 2 }, 1);
        expect(await store.tasks.get(record.id)).toMatchObject({
          status: "completed",
          traceparent,
        });
      });

      it("should let one of two concurrent writers win", async () => {
        const record = taskRecord(id("task"));
        await store.tasks.create(record, 10);
        const outcomes = await Promise.all([
          store.tasks.replace({ ...record, status: "completed", version: 2 }, 1),
          peer.tasks.replace({ ...record, status: "cancelled", version: 2 }, 1),
        ]);
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      });

      it("should cap a principal's unfinished tasks, and free a slot when one ends", async () => {
        const principal = `cap-${id("principal")}`;
        const first = taskRecord(id("task"), { principal });
        expect(await store.tasks.create(first, 2)).toBe(true);
        expect(await peer.tasks.create(taskRecord(id("task"), { principal }), 2)).toBe(true);
        expect(await store.tasks.create(taskRecord(id("task"), { principal }), 2)).toBe(false);
        expect(await store.tasks.create(taskRecord(id("task"), { principal: "other" }), 2)).toBe(
          true,
        );
        await store.tasks.replace({ ...first, status: "completed", version: 2 }, 1);
        expect(await peer.tasks.create(taskRecord(id("task"), { principal }), 2)).toBe(true);
      });

      it("should count a task against its quota, when it has one, instead of its principal", async () => {
        // Anonymous callers share the empty principal; each client's quota is its own.
        const [mine, theirs] = [`quota-${id("client")}`, `quota-${id("client")}`];
        const first = taskRecord(id("task"), { principal: "", quota: mine });
        expect(await store.tasks.create(first, 1)).toBe(true);
        expect(
          await peer.tasks.create(taskRecord(id("task"), { principal: "", quota: mine }), 1),
        ).toBe(false);
        expect(
          await peer.tasks.create(taskRecord(id("task"), { principal: "", quota: theirs }), 1),
        ).toBe(true);
        await store.tasks.replace({ ...first, status: "failed", version: 2 }, 1);
        expect(
          await peer.tasks.create(taskRecord(id("task"), { principal: "", quota: mine }), 1),
        ).toBe(true);
      });

      it("should expire a task after its TTL", async () => {
        const record = taskRecord(id("task"), { ttlMs: 300 });
        await store.tasks.create(record, 10);
        expect(await peer.tasks.get(record.id)).toBeDefined();
        // The task's ttl runs out.
        await sleep(450);
        expect(await peer.tasks.get(record.id)).toBeUndefined();
        expect(await store.tasks.replace({ ...record, version: 2 }, 1)).toBe(false);
      });
    });

    describe("event log", () => {
      it("should replay the events after a given one, in order, to any process", async () => {
        const stream = `${id("session")}/s1`;
        for (const n of [1, 2, 3]) await store.events.append(stream, event(n));
        expect(await peer.events.after(stream, "s1.1")).toEqual([event(2), event(3)]);
        expect(await store.events.after(stream, "s1.2")).toEqual([event(3)]);
        expect(await store.events.after(stream, "s1.3")).toEqual([]);
      });

      it("should keep the id of the change an event delivers", async () => {
        const stream = `${id("session")}/s1`;
        await store.events.append(stream, event(1));
        await store.events.append(stream, { ...event(2), eid: "change-2" });
        await store.events.append(stream, event(3));
        expect(await peer.events.after(stream, "s1.1")).toEqual([
          { ...event(2), eid: "change-2" },
          event(3),
        ]);
      });

      it("should answer undefined for an unknown stream or event", async () => {
        const stream = `${id("session")}/s1`;
        expect(await store.events.after(stream, "s1.1")).toBeUndefined();
        await store.events.append(stream, event(1));
        expect(await store.events.after(stream, "s1.9")).toBeUndefined();
        expect(await store.events.after(`${stream}x`, "s1.1")).toBeUndefined();
      });

      it("should keep only the newest maxEventsPerStream events", async () => {
        const stream = `${id("session")}/s1`;
        for (let n = 1; n <= 7; n++) await store.events.append(stream, event(n));
        expect(await store.events.after(stream, "s1.2")).toBeUndefined(); // trimmed away
        expect(await peer.events.after(stream, "s1.3")).toEqual([4, 5, 6, 7].map(event));
      });

      it("should keep the streams of a session, and of different sessions, apart", async () => {
        const [one, two] = [id("session"), id("session")];
        await store.events.append(`${one}/s1`, event(1));
        await store.events.append(`${one}/s1`, event(2));
        await store.events.append(`${one}/g1`, { id: "g1.1", message: { n: "g" } });
        await store.events.append(`${two}/s1`, event(1));
        expect(await store.events.after(`${one}/s1`, "s1.1")).toEqual([event(2)]);
        expect(await store.events.after(`${one}/g1`, "g1.1")).toEqual([]);
        expect(await store.events.after(`${one}/g1`, "s1.1")).toBeUndefined();
        expect(await store.events.after(`${two}/s1`, "s1.1")).toEqual([]);
      });

      it("should forget a dropped stream", async () => {
        const stream = `${id("session")}/s1`;
        await store.events.append(stream, event(1));
        await store.events.append(stream, event(2));
        await peer.events.drop(stream);
        expect(await store.events.after(stream, "s1.1")).toBeUndefined();
      });
    });

    describe("rate limiter", () => {
      it("should share one budget per key between processes, and keep keys apart", async () => {
        const policy = { points: 3, windowMs: 60_000 };
        const [here, there] = [await store.rateLimiter!(policy), await peer.rateLimiter!(policy)];
        const key = id("principal");
        expect((await here.consume(key, 2)).remaining).toBe(1);
        expect(await there.consume(key, 1)).toMatchObject({ allowed: true, remaining: 0 });
        const refused = await here.consume(key, 1);
        expect(refused).toMatchObject({ allowed: false, remaining: 0 });
        expect(refused.resetMs).toBeGreaterThan(0);
        expect(refused.resetMs).toBeLessThanOrEqual(60_000);
        expect((await there.consume(id("principal"), 3)).allowed).toBe(true);
      });

      it("should give back what a refused charge took", async () => {
        const limiter = await store.rateLimiter!({ points: 5, windowMs: 60_000 });
        const key = id("principal");
        await limiter.consume(key, 2);
        expect(await limiter.consume(key, 4)).toMatchObject({ allowed: false, remaining: 3 });
        expect(await limiter.consume(key, 3)).toMatchObject({ allowed: true, remaining: 0 });
      });

      it("should make the budget whole again when its window ends", async () => {
        const limiter = await peer.rateLimiter!({ points: 1, windowMs: 1_000 });
        const key = id("principal");
        expect((await limiter.consume(key, 1)).allowed).toBe(true);
        expect((await limiter.consume(key, 1)).allowed).toBe(false);
        // Refused charges are given back, so polling does not push the window's end away.
        await expect
          .poll(async () => (await limiter.consume(key, 1)).allowed, { timeout: 3_000 })
          .toBe(true);
      });
    });

    describeEventsStoreContract(() => ({ store, peer, id }));

    it("should close more than once", async () => {
      await store.close();
      await store.close();
    });
  });
}
