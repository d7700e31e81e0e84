// A stream's events relayed from another process, in the order the bus delivers them (on a
// Redis Cluster, or across a reconnection, not always the order they were sent), applied in
// their own order against the real in-memory replay log.
import { describe, expect, it } from "vitest";
import { RelayOrder } from "../../../src/http/legacy/relay-order.js";
import { endMarkerId, eventId } from "../../../src/http/legacy/stream-ids.js";
import { memoryStore } from "../../../src/store/memory.js";
import type { LoggedEvent } from "../../../src/store/types.js";

const STREAM = "abc";
const LOG_KEY = `session/${STREAM}`;

function logged(seq: number): LoggedEvent {
  return { id: eventId(STREAM, seq), message: { jsonrpc: "2.0", method: "m", params: { seq } } };
}

/** A relay into an array, backed by a real replay log holding `inLog`. */
async function relay(inLog: number[], options: { end?: boolean } = {}) {
  const log = memoryStore().events;
  for (const seq of inLog) await log.append(LOG_KEY, logged(seq));
  if (options.end) await log.append(LOG_KEY, { id: endMarkerId(STREAM), message: {} });
  const applied: number[] = [];
  const errors: unknown[] = [];
  let ended = false;
  const order = new RelayOrder(
    {
      get written() {
        return applied.at(-1) ?? 0;
      },
      write: (_event, seq) => void applied.push(seq),
      end: () => {
        ended = true;
      },
      after: (seq) => log.after(LOG_KEY, eventId(STREAM, seq)),
      onError: (error) => void errors.push(error),
    },
    20,
  );
  return { order, applied, errors, ended: () => ended };
}

describe("RelayOrder", () => {
  it("should apply events that arrive in order at once", async () => {
    const { order, applied } = await relay([]);
    for (const seq of [1, 2, 3]) order.event(logged(seq));
    expect(applied).toEqual([1, 2, 3]);
  });

  it("should hold an event that overtook its predecessor until the predecessor comes", async () => {
    const { order, applied } = await relay([]);
    order.event(logged(1));
    order.event(logged(3));
    order.event(logged(4));
    expect(applied).toEqual([1]);
    order.event(logged(2));
    expect(applied).toEqual([1, 2, 3, 4]);
  });

  it("should drop repeats of events already applied", async () => {
    const { order, applied } = await relay([]);
    for (const seq of [1, 2, 2, 1, 3, 3]) order.event(logged(seq));
    expect(applied).toEqual([1, 2, 3]);
  });

  it("should read a predecessor the bus never delivered from the log", async () => {
    const { order, applied } = await relay([1, 2, 3]);
    order.event(logged(1));
    order.event(logged(3));
    await expect.poll(() => applied).toEqual([1, 2, 3]);
  });

  it("should go on with the events that came early when the log lacks the gap too", async () => {
    const { order, applied, errors } = await relay([1]);
    order.event(logged(1));
    order.event(logged(4));
    order.event(logged(3));
    await expect.poll(() => applied).toEqual([1, 3, 4]);
    order.event(logged(2));
    expect(applied).toEqual([1, 3, 4]);
    expect(errors).toEqual([]);
  });

  it("should not let the end overtake the events before it", async () => {
    const { order, applied, ended } = await relay([]);
    order.event(logged(1));
    order.end(3);
    expect(ended()).toBe(false);
    order.event(logged(3));
    expect(ended()).toBe(false);
    order.event(logged(2));
    expect(applied).toEqual([1, 2, 3]);
    expect(ended()).toBe(true);
  });

  it("should end after what the log holds when the events before the end never came", async () => {
    const { order, applied, ended } = await relay([1, 2], { end: true });
    order.event(logged(1));
    order.end(2);
    await expect.poll(ended).toBe(true);
    expect(applied).toEqual([1, 2]);
  });

  it("should end once it waited, even when the last events are lost everywhere", async () => {
    const { order, applied, ended } = await relay([1]);
    order.event(logged(1));
    order.end(5);
    await expect.poll(ended).toBe(true);
    expect(applied).toEqual([1]);
  });

  it("should apply nothing more once closed", async () => {
    const { order, applied, ended } = await relay([1, 2, 3]);
    order.event(logged(1));
    order.event(logged(3));
    order.close();
    order.event(logged(2));
    order.end(3);
    expect(applied).toEqual([1]);
    expect(ended()).toBe(false);
  });
});
