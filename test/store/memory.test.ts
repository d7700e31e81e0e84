import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryStore } from "../../src/store/memory.js";
import { readAtOnce } from "../../src/store/read-at-once.js";
import { compareSeq, type SessionRecord } from "../../src/store/types.js";
import { CONTRACT_OPTIONS, describeStoreContract } from "./contract.js";

describeStoreContract("memoryStore", async () => {
  const store = memoryStore(CONTRACT_OPTIONS);
  return { store, cleanup: () => store.close() };
});

describe("memoryStore feeds", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("should keep positions increasing when the clock goes back", async () => {
    const store = memoryStore();
    const retain = { maxLen: 10, maxAgeMs: 60_000 };
    const now = vi.spyOn(Date, "now").mockReturnValue(1_000_000);
    const { seq: first } = await store.feeds!.append("f", { n: 1 }, retain);
    now.mockReturnValue(999_000);
    const { seq: second } = await store.feeds!.append("f", { n: 2 }, retain);
    now.mockReturnValue(1_000_001);
    const { seq: third } = await store.feeds!.append("f", { n: 3 }, retain);
    expect([first, second, third]).toEqual(["1000000-0", "1000000-1", "1000001-0"]);
    expect(compareSeq(first, second)).toBeLessThan(0);
    await store.close();
  });

  it("should trim an idle feed's aged entries on its sweep", async () => {
    vi.useFakeTimers({ now: 5_000_000, toFake: ["Date", "setInterval", "clearInterval"] });
    try {
      const store = memoryStore();
      const { seq } = await store.feeds!.append("f", { n: 1 }, { maxLen: 10, maxAgeMs: 1_000 });
      vi.advanceTimersByTime(60_000);
      const read = await store.feeds!.read("f", "0-0", 10);
      expect(read).toEqual({ entries: [], head: seq, truncated: true });
      expect(await store.feeds!.read("f", seq, 10)).toMatchObject({ truncated: false });
      await store.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A session record of `client`, for the sessions' own tests. */
const record = (id: string, client: string): SessionRecord => ({
  id,
  protocolVersion: "2025-11-25",
  clientInfo: { name: "client", version: "1.0.0" },
  capabilities: {},
  subscriptions: [],
  principal: "",
  createdAt: Date.now(),
  client,
});

describe("memoryStore sessions created again under a live id", () => {
  it("should replace the old record in every order, as the newest", async () => {
    const store = memoryStore();
    await store.sessions.create(record("a", "alice"), 10);
    await store.sessions.create(record("b", "alice"), 10);
    await store.sessions.create(record("a", "alice"), 10);
    expect(await store.sessions.get("a", { client: "alice" })).toBeDefined();
    expect(await store.sessions.ofClient("alice")).toEqual(["b", "a"]);
    await store.sessions.create(record("b", "bob"), 10);
    expect(await store.sessions.ofClient("alice")).toEqual(["a"]);
    expect(await store.sessions.ofClient("bob")).toEqual(["b"]);
    // Evicted first: the longest idle is a, since b was created again after it.
    expect(await store.sessions.create(record("c", "carol"), 2)).toEqual(["a"]);
    await store.close();
  });
});

describe("memoryStore sessions read at once", () => {
  it("should answer as get does, not in a promise: the record, its use and its mark", async () => {
    const store = memoryStore({ sessionIdleMs: 60_000 });
    const sessions = store.sessions;
    const now = readAtOnce(sessions.get)!;
    await sessions.create(record("a", "alice"), 10);
    await sessions.create(record("b", "alice"), 10);
    const read = now("a", { client: "alice", activeFor: "p1" });
    expect(read).toEqual(await sessions.get("a"));
    expect(read).toMatchObject({ id: "a", client: "alice", revision: 0 });
    // The use made a the client's most recent, and the mark holds.
    expect(await sessions.ofClient("alice")).toEqual(["b", "a"]);
    expect(await sessions.activeOwners("a")).toEqual(["p1"]);
    await sessions.update("a", { logLevel: "error" });
    expect(now("a")).toMatchObject({ logLevel: "error", revision: 1 });
    expect(now("unknown", { activeFor: "p1" })).toBeUndefined();
    await sessions.delete("a");
    expect(now("a")).toBeUndefined();
    await store.close();
  });

  it("should have no read at once for a get that is not the store's own", () => {
    const store = memoryStore();
    const sessions = store.sessions;
    expect(readAtOnce(sessions.get)).toBeDefined();
    expect(readAtOnce({ ...sessions }.get)).toBeDefined();
    expect(readAtOnce({ ...sessions, get: (id: string) => sessions.get(id) }.get)).toBeUndefined();
    expect(readAtOnce(memoryStore().sessions.get)).not.toBe(readAtOnce(sessions.get));
  });
});
