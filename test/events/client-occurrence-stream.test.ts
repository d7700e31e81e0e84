// The iterator of poll and push subscriptions: each eventId once, in order, and a cursor that
// passes an occurrence only once the app asks for the next one.
import { describe, expect, it } from "vitest";
import { OccurrenceStream } from "../../src/client/ext/events/occurrence-stream.js";
import type { EventOccurrence } from "../../src/protocol/events.js";

const event = (eventId: string): EventOccurrence => ({
  eventId,
  name: "note.created",
  timestamp: "2026-12-04T00:00:00Z",
  data: { id: eventId },
});

function stream(cursor: string | null = "c0") {
  const persisted: (string | null)[] = [];
  let closed = 0;
  const occurrences = new OccurrenceStream(
    "push",
    cursor,
    (c) => persisted.push(c),
    () => closed++,
  );
  return { occurrences, persisted, closed: () => closed };
}

describe("an occurrence stream", () => {
  it("should move the cursor past an occurrence only when the app asks for the next", async () => {
    const { occurrences, persisted } = stream();
    occurrences.deliver(event("e1"), "c1");
    occurrences.deliver(event("e2"), "c2");
    occurrences.mark("c3");
    expect((await occurrences.next()).value!.eventId).toBe("e1");
    expect(occurrences.cursor).toBe("c0");
    expect((await occurrences.next()).value!.eventId).toBe("e2");
    expect(occurrences.cursor).toBe("c1");
    occurrences.finish();
    expect(await occurrences.next()).toEqual({ value: undefined, done: true });
    expect(persisted).toEqual(["c1", "c2", "c3"]);
  });

  it("should yield each eventId once, a repeat's cursor still counting", async () => {
    const { occurrences } = stream();
    occurrences.deliver(event("e1"), "c1");
    occurrences.deliver(event("e1"), "c2");
    occurrences.deliver(event("e2"), "c3");
    expect((await occurrences.next()).value!.eventId).toBe("e1");
    expect((await occurrences.next()).value!.eventId).toBe("e2");
    expect(occurrences.cursor).toBe("c2");
  });

  it("should take a position at once when nothing is queued or held", async () => {
    const { occurrences, persisted } = stream(null);
    occurrences.mark("c1");
    expect(occurrences.cursor).toBe("c1");
    occurrences.deliver(event("e1"), "c2");
    // Queued behind e1, which the app has not taken: it waits.
    occurrences.mark("c3");
    expect(occurrences.cursor).toBe("c1");
    await occurrences.next();
    // Held by the app: still waiting.
    occurrences.mark("c4");
    expect(occurrences.cursor).toBe("c1");
    expect(persisted).toEqual(["c1"]);
  });

  it("should not count the occurrence held when closed as taken", async () => {
    const { occurrences, closed } = stream();
    occurrences.deliver(event("e1"), "c1");
    await occurrences.next();
    occurrences.close();
    expect(occurrences.cursor).toBe("c0");
    expect(closed()).toBe(1);
    expect(await occurrences.next()).toEqual({ value: undefined, done: true });
    expect(occurrences.cursor).toBe("c0");
  });

  it("should reject active when it ends before it was live", async () => {
    const { occurrences } = stream();
    occurrences.finish(new Error("refused"));
    await expect(occurrences.active).rejects.toThrow("refused");
    await expect(occurrences.next()).rejects.toThrow("refused");
  });
});
