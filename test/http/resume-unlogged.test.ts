import { describe, expect, it } from "vitest";
import { ownerOfStream, postStreamId, streamOfEventId } from "../../src/http/legacy/stream-ids.js";
import { createMcpHandler, type McpStore, memoryStore } from "../../src/index.js";
import type { LoggedEvent } from "../../src/store/types.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { legacyHeaders, openSession } from "../helpers/legacy.js";
import { parseSse, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { mount } from "../helpers/transports.js";

/**
 * Two handlers on one store behave as two processes. The first one's appends are held back
 * while `unlogged` (in `held`): as when a process writes an event to its client and is killed
 * before the append reaches the store, or its appends are only slow.
 */
async function twoProcesses() {
  const base = memoryStore();
  const held: [string, LoggedEvent][] = [];
  const state = { unlogged: false };
  const store: McpStore = {
    ...base,
    events: {
      ...base.events,
      append: async (stream, event) => {
        if (state.unlogged) held.push([stream, event]);
        else await base.events.append(stream, event);
      },
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
  const session = await openSession(viaUrl(a.url));

  /** Starts the call on the first process, its events unlogged; the client's last event id. */
  const startCall = async () => {
    state.unlogged = true;
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
    await reader.cancel();
    state.unlogged = false;
    return reader.lastEventId!;
  };
  const resume = (url: string, lastEventId: string) =>
    fetch(url, {
      headers: {
        ...legacyHeaders(session),
        accept: "text/event-stream",
        "last-event-id": lastEventId,
      },
      signal: AbortSignal.timeout(10_000),
    });
  return { base, held, a, b, session, startCall, resume };
}

describe("a POST stream resumed on another process before its log had its events", () => {
  it("should wait for the owner's presence to lapse, then end with a retryable error", async () => {
    const { base, a, b, startCall, resume } = await twoProcesses();
    try {
      const lastEventId = await startCall();
      const owner = ownerOfStream(streamOfEventId(lastEventId)!)!;
      expect(await base.leases.holder(`fleet/${owner}`)).toBe(owner);

      const resumed = await resume(b.url, lastEventId);
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
      const again = await resume(b.url, lastEventId);
      expect(parseSse(await again.text())).toEqual([answer]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("should close once the slow appends land, so the next resumption replays and goes on", async () => {
    const { base, held, a, b, startCall, resume } = await twoProcesses();
    try {
      const lastEventId = await startCall();
      const resumed = await resume(b.url, lastEventId);
      const replay = new SseReader(resumed.body!);
      await expect.poll(() => replay.comments.length).toBeGreaterThan(1);
      expect(replay.ended).toBe(false);
      // The owner's appends arrive late: the waiting connection closes with nothing.
      for (const [stream, event] of held.splice(0)) await base.events.append(stream, event);
      await replay.done;
      expect(replay.pending).toBe(0);
      // Known to the log now: the stream goes on live, and ends as a logged one does.
      const next = new SseReader((await resume(b.url, lastEventId)).body!);
      await expect.poll(() => next.comments.length).toBeGreaterThan(1);
      expect(next.ended).toBe(false);
      const owner = ownerOfStream(streamOfEventId(lastEventId)!)!;
      await base.leases.release(`fleet/${owner}`, owner);
      expect(await next.next(5_000)).toMatchObject({ id: "doomed", error: { code: -32603 } });
      await next.done;
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("should close at once a stream its own process would hold and does not", async () => {
    const { a, b, startCall, resume } = await twoProcesses();
    try {
      const lastEventId = await startCall();
      const owner = ownerOfStream(streamOfEventId(lastEventId)!)!;
      // A stream id naming the first process that it never opened: nothing to wait for there.
      const unknown = `${postStreamId("0123456789abcdef", owner, "x")}.2`;
      const response = await resume(a.url, unknown);
      expect(response.status).toBe(200);
      expect(await response.text()).not.toContain("data:");
    } finally {
      await a.close();
      await b.close();
    }
  });
});
