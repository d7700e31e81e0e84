import { describe, expect, it, vi } from "vitest";
import { SessionCache } from "../../../src/http/legacy/session-cache.js";
import { memorySessions } from "../../../src/store/memory-sessions.js";
import type { EventBus, SessionRecord, SessionStore } from "../../../src/store/types.js";

/**
 * A bus shared between processes whose messages are all late: on a Redis Cluster, the message
 * that another process changed a session reaches this one's subscriber after that process's
 * PUBLISH returned, so the next request can arrive first.
 */
function lateBus(): EventBus {
  return {
    publish: async () => 0,
    subscribe: async () => async () => {},
    epoch: () => 0,
  };
}

/** Memory sessions that hand out copies, as a shared store does (a record read is a snapshot). */
function copyingSessions(): SessionStore {
  const sessions = memorySessions(60_000);
  return {
    ...sessions,
    get: async (id, use) => structuredClone(await sessions.get(id, use)),
  };
}

const record = (id: string): SessionRecord => ({
  id,
  protocolVersion: "2025-11-25",
  capabilities: {},
  subscriptions: [],
  principal: "",
  createdAt: 0,
});

describe("SessionCache, with another process's messages late", () => {
  it("should serve a log level changed on another process at once", async () => {
    const store = copyingSessions();
    const cache = new SessionCache(store, lateBus(), 100, (error) => {
      throw error;
    });
    await store.create(record("s1"), 100);
    await expect
      .poll(() => Promise.resolve(cache.get("s1")).then((r) => r?.logLevel === undefined))
      .toBe(true);
    const reads = vi.spyOn(store, "get");
    // Warm: one touch, no read.
    expect((await cache.get("s1"))?.id).toBe("s1");
    expect(reads).not.toHaveBeenCalled();
    // Another process sets the level; its message to drop the entry has not come.
    await store.update("s1", { logLevel: "warning", subscriptions: ["test://a"] });
    expect(await cache.get("s1")).toMatchObject({
      logLevel: "warning",
      subscriptions: ["test://a"],
    });
    expect(reads).toHaveBeenCalledTimes(1);
    // Warm again on the new revision.
    expect((await cache.get("s1"))?.logLevel).toBe("warning");
    expect(reads).toHaveBeenCalledTimes(1);
    await cache.close();
  });

  it("should refuse a session deleted on another process at once", async () => {
    const store = copyingSessions();
    const cache = new SessionCache(store, lateBus(), 100, (error) => {
      throw error;
    });
    await store.create(record("s2"), 100);
    await expect.poll(() => Promise.resolve(cache.get("s2")).then((r) => r?.id)).toBe("s2");
    await store.delete("s2");
    expect(await cache.get("s2")).toBeUndefined();
    await cache.close();
  });
});
