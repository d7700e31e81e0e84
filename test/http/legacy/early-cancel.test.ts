// A cancellation posted to another process while the process running the request had not yet
// subscribed to the session's channel (it subscribes only once the request opens a stream) is
// kept in the store, and the running process finds it as soon as it listens. Against the real
// in-memory store; the Redis one keeps the mark in the session's slot (test/cluster/legacy).
import { describe, expect, it, vi } from "vitest";
import { cancelledAmong, markCancelled } from "../../../src/http/legacy/early-cancel.js";
import { HeldSession } from "../../../src/http/legacy/held-session.js";
import { memoryStore } from "../../../src/store/memory.js";
import { LazyAbort } from "../../../src/utils/lazy-abort.js";

function held(store = memoryStore()) {
  const session = new HeldSession("session-1", [], {
    log: store.events,
    bus: store.bus,
    processId: "runner",
    leases: store.leases,
    present: async () => {},
    requestTimeoutMs: 5_000,
    onError: (error) => {
      throw error;
    },
  });
  return { store, session };
}

describe("a cancellation posted before the running process listened", () => {
  it("should abort the request once the process listens", async () => {
    const { store, session } = held();
    const [cancelled, other] = [new LazyAbort(), new LazyAbort()];
    session.track("call-1", cancelled);
    session.track("call-2", other);
    // Another process: the request is not running there, so it keeps the cancellation, then
    // publishes it on a channel nobody here listens to yet.
    await markCancelled(store.leases, "other-process", "session-1", "call-1");
    await session.listen();
    await vi.waitFor(() => expect(cancelled.aborted).toBe(true));
    expect(other.aborted).toBe(false);
    session.close("done");
  });

  it("should keep marks to a session's own requests", async () => {
    const store = memoryStore();
    await markCancelled(store.leases, "p", "session-1", "call-1");
    expect(await cancelledAmong(store.leases, "session-1", ["call-1", "call-2"])).toEqual([
      "call-1",
    ]);
    expect(await cancelledAmong(store.leases, "session-2", ["call-1"])).toEqual([]);
  });
});
