// A legacy GET stream that moves between processes delivers each change once: the new holder
// hears the bus on its own schedule (on a Redis Cluster, a change can reach it well after the
// old holder delivered it), so it skips the changes the old holder's log shows as delivered.
// Two LegacyStreams over one real in-memory replay log stand in for the two processes.
import { describe, expect, it } from "vitest";
import { LegacyStream } from "../../../src/http/legacy/stream.js";
import { eventId } from "../../../src/http/legacy/stream-ids.js";
import { SseStream } from "../../../src/http/streams/sse.js";
import type { JsonRpcMessage } from "../../../src/protocol/messages.js";
import { memoryStore } from "../../../src/store/memory.js";

const changed = (kind: string): JsonRpcMessage => ({
  jsonrpc: "2.0",
  method: `notifications/${kind}/list_changed`,
});

/** The events a connection received: id and method of each non-empty one. */
async function received(writer: SseStream): Promise<string[]> {
  writer.close();
  const text = await new Response(writer.readable).text();
  return text
    .split("\n\n")
    .filter((block) => block.includes("data: {"))
    .map((block) => {
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as { method: string };
      return `${id} ${data.method}`;
    });
}

function streams() {
  const log = memoryStore().events;
  const options = {
    sessionId: "s",
    id: "g1",
    log,
    onError: (error: unknown) => {
      throw error;
    },
  };
  return { old: new LegacyStream(options), taker: new LegacyStream(options) };
}

describe("LegacyStream taken over by another process", () => {
  it("should deliver once a change the old holder logged and the taker heard late", async () => {
    const { old, taker } = streams();
    const first = new SseStream();
    old.attach(first);
    old.send(changed("tools"), undefined, "change-1");
    // The client's connection breaks; the old holder delivers one more change to the log.
    expect(await received(first)).toEqual([`${eventId("g1", 1)} notifications/tools/list_changed`]);
    old.send(changed("prompts"), undefined, "change-2");
    await old.flushed();

    const resumed = new SseStream();
    await taker.resume(resumed, eventId("g1", 1), async () => {
      // While the old holder lets go, the taker hears change 2 (late) and a new change 3.
      taker.send(changed("prompts"), undefined, "change-2");
      taker.send(changed("resources"), undefined, "change-3");
      taker.continueFrom(old.seq);
    });
    // Later still, change 2 reaches it once more (another node's copy): still not repeated.
    taker.send(changed("prompts"), undefined, "change-2");
    taker.send(changed("tools"), undefined, "change-4");
    expect(await received(resumed)).toEqual([
      `${eventId("g1", 2)} notifications/prompts/list_changed`,
      `${eventId("g1", 3)} notifications/resources/list_changed`,
      `${eventId("g1", 4)} notifications/tools/list_changed`,
    ]);
  });

  it("should not repeat a change the client saw before it resumed, heard late by the taker", async () => {
    const { old, taker } = streams();
    const first = new SseStream();
    old.attach(first);
    old.prime(first);
    old.send(changed("tools"), undefined, "change-1");
    old.send(changed("prompts"), undefined, "change-2");
    await old.flushed();
    expect(await received(first)).toHaveLength(2);
    // The client saw both and resumes after the second; the taker hears change 1 seconds late.
    const resumed = new SseStream();
    await taker.resume(resumed, eventId("g1", 3), async () => taker.continueFrom(old.seq));
    taker.send(changed("tools"), undefined, "change-1");
    taker.send(changed("resources"), undefined, "change-3");
    expect(await received(resumed)).toEqual([
      `${eventId("g1", 4)} notifications/resources/list_changed`,
    ]);
  });

  it("should still deliver a change heard twice when neither copy was delivered before", async () => {
    const { old, taker } = streams();
    old.attach(new SseStream());
    old.send(changed("tools"), undefined, "change-1");
    await old.flushed();
    const resumed = new SseStream();
    await taker.resume(resumed, eventId("g1", 1), async () => taker.continueFrom(old.seq));
    taker.send(changed("tools"), undefined, "change-2");
    taker.send(changed("prompts"));
    expect(await received(resumed)).toEqual([
      `${eventId("g1", 2)} notifications/tools/list_changed`,
      `${eventId("g1", 3)} notifications/prompts/list_changed`,
    ]);
  });
});
