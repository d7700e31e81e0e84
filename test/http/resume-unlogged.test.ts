import { describe, expect, it } from "vitest";
import { ownerOfStream, streamOfEventId } from "../../src/http/legacy/stream-ids.js";
import { createMcpHandler, type McpStore, memoryStore } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { legacyHeaders, openSession } from "../helpers/legacy.js";
import { parseSse, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { mount } from "../helpers/transports.js";

describe("a POST stream resumed on another process before its log had its events", () => {
  it("should wait for the owner's presence to lapse, then end with a retryable error", async () => {
    // Two handlers on one store behave as two processes. The first one's appends are dropped
    // while `unlogged`: as when a process writes an event to its client and is killed before
    // the append reaches the store.
    const base = memoryStore();
    let unlogged = false;
    const store: McpStore = {
      ...base,
      events: {
        ...base.events,
        append: (stream, event) =>
          unlogged ? Promise.resolve() : base.events.append(stream, event),
      },
      close: async () => {},
    };
    const owning = createFixtureServer();
    owning.tool({ name: "wait_for_cancel" }, async (_args, ctx) => {
      await ctx.log("info", "waiting");
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      return "cancelled";
    });
    const options = { secret: "s", store, legacy: { resumeCheckMs: 50 } };
    const a = await mount("node", createMcpHandler(owning, options));
    const b = await mount("node", createMcpHandler(createFixtureServer(), options));
    try {
      const session = await openSession(viaUrl(a.url));
      unlogged = true;
      const call = await fetch(a.url, {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "doomed",
          method: "tools/call",
          params: { name: "wait_for_cancel", arguments: {} },
        }),
      });
      const reader = new SseReader(call.body!);
      assertLegacyMessage(await reader.next(5_000), "");
      const lastEventId = reader.lastEventId!;
      await reader.cancel();
      unlogged = false;
      const owner = ownerOfStream(streamOfEventId(lastEventId)!)!;
      expect(await base.leases.holder(`fleet/${owner}`)).toBe(owner);

      const resume = () =>
        fetch(b.url, {
          headers: {
            ...legacyHeaders(session),
            accept: "text/event-stream",
            "last-event-id": lastEventId,
          },
          signal: AbortSignal.timeout(10_000),
        });
      const resumed = await resume();
      expect(resumed.status).toBe(200);
      const replay = new SseReader(resumed.body!);
      // Nothing while the owner keeps its presence: the stream stays open, with keep-alives.
      await expect.poll(() => replay.comments.length).toBeGreaterThan(2);
      expect(replay.ended).toBe(false);
      expect(replay.pending).toBe(0);
      // The owner is gone (its presence lapsed): the request's retryable error, then the end.
      await base.leases.release(`fleet/${owner}`, owner);
      const answer = await replay.next(5_000);
      assertLegacyMessage(answer, "tools/call");
      expect(answer).toMatchObject({
        id: "doomed",
        error: { code: -32603, data: { retryable: true } },
      });
      await replay.done;
      // The log holds it now, after the client's last event: a later resumption ends at once.
      const again = await resume();
      expect(parseSse(await again.text())).toEqual([answer]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
