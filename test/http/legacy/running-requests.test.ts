// A session's running requests, as cancellation and the end of a session find them: the first in
// fields of its own, a Map once a second runs beside it. Checked against a Map as the model.
import { describe, expect, it } from "vitest";
import { RunningRequests } from "../../../src/http/legacy/running-requests.js";
import { LazyAbort } from "../../../src/utils/lazy-abort.js";

/** A small deterministic generator, so a failing sequence repeats. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe("RunningRequests", () => {
  it("should find, cancel and forget requests as a Map of the latest by id does", () => {
    const next = random(11);
    const running = new RunningRequests();
    const model = new Map<string, LazyAbort>();
    const untracks: { id: string; abort: LazyAbort; untrack: () => void }[] = [];
    for (let step = 0; step < 4_000; step++) {
      const id = String(Math.floor(next() * 4));
      const roll = next();
      if (roll < 0.45) {
        const abort = new LazyAbort();
        untracks.push({ id, abort, untrack: running.track(id, abort) });
        model.set(id, abort);
      } else if (roll < 0.85 && untracks.length > 0) {
        const picked = untracks.splice(Math.floor(next() * untracks.length), 1)[0]!;
        const { id: gone, abort, untrack } = picked;
        untrack();
        // Untracking an earlier request of an id leaves the later one in place.
        if (model.get(gone) === abort) model.delete(gone);
      } else if (roll < 0.95) {
        const expected = model.get(id);
        expect(running.cancel(id)).toBe(expected !== undefined);
        if (expected) expect(expected.aborted).toBe(true);
      } else {
        const all = [...model.values()];
        running.abortAll("ended");
        model.clear();
        for (const abort of all) expect(abort.aborted).toBe(true);
      }
      expect(running.size).toBe(model.size);
      expect(running.ids().sort()).toEqual([...model.keys()].sort());
    }
  });

  it("should keep the later of two requests with one id when the earlier ends", () => {
    const running = new RunningRequests();
    const first = new LazyAbort();
    const second = new LazyAbort();
    const untrackFirst = running.track("7", first);
    const untrackSecond = running.track("7", second);
    untrackFirst();
    expect(running.ids()).toEqual(["7"]);
    expect(running.cancel("7")).toBe(true);
    expect(second.aborted).toBe(true);
    expect(first.aborted).toBe(false);
    untrackSecond();
    expect(running.size).toBe(0);
    expect(running.cancel("7")).toBe(false);
  });

  it("should hold one request, then two side by side, then one again", () => {
    const running = new RunningRequests();
    const a = new LazyAbort();
    const b = new LazyAbort();
    const c = new LazyAbort();
    const untrackA = running.track("a", a);
    expect(running.ids()).toEqual(["a"]);
    const untrackB = running.track("b", b);
    expect(running.ids()).toEqual(["a", "b"]);
    untrackA();
    untrackB();
    expect(running.size).toBe(0);
    running.track("c", c);
    running.abortAll("closed");
    expect([a.aborted, b.aborted, c.aborted]).toEqual([false, false, true]);
    expect(running.size).toBe(0);
  });
});
