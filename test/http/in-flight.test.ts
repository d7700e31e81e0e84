import { describe, expect, it } from "vitest";
import { InFlight } from "../../src/http/streams/in-flight.js";

describe("InFlight", () => {
  it("should count each request once, however often it leaves", () => {
    const inflight = new InFlight();
    const leaveA = inflight.begin(() => {});
    const leaveB = inflight.begin(() => {});
    expect(inflight.size).toBe(2);
    leaveA();
    leaveA();
    expect(inflight.size).toBe(1);
    leaveB();
    expect(inflight.size).toBe(0);
  });

  it("should let a drain go on as soon as the last request leaves, ending none", async () => {
    const inflight = new InFlight();
    const ended: string[] = [];
    const leave = inflight.begin(() => ended.push("a"));
    const settled = inflight.settle(60_000);
    let done = false;
    void settled.then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    leave();
    await settled;
    expect(ended).toEqual([]);
  });

  it("should end what is still running once the grace is over, oldest first", async () => {
    const inflight = new InFlight();
    const ended: string[] = [];
    const leaves: (() => void)[] = [];
    for (const name of ["a", "b", "c"]) {
      const leave = inflight.begin(() => {
        ended.push(name);
        leave();
      });
      leaves.push(leave);
    }
    leaves[1]!();
    await inflight.settle(1);
    expect(ended).toEqual(["a", "c"]);
    expect(inflight.size).toBe(0);
  });
});
