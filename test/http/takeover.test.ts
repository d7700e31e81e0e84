import { describe, expect, it } from "vitest";
import { createMcpHandler, type McpStore, memoryStore } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { legacyHeaders, openSession } from "../helpers/legacy.js";
import { viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { mount } from "../helpers/transports.js";

const LIST_CHANGED = { jsonrpc: "2.0", method: "notifications/tools/list_changed" };

describe("a legacy GET stream resumed on another process", () => {
  it("should deliver a change made while the stream changes hands, with ids that only grow", async () => {
    // Two handlers on one store behave as two processes. The store's bus runs `during` when the
    // old holder says it let go: a change lands after it stopped logging and before the new
    // holder has read the log, exactly while the stream changes hands.
    const base = memoryStore();
    let during: (() => void) | undefined;
    const store: McpStore = {
      ...base,
      bus: {
        ...base.bus,
        publish(channel, message, shard) {
          if ((message as { t?: string }).t === "released") {
            const run = during;
            during = undefined;
            run?.();
          }
          return base.bus.publish(channel, message, shard);
        },
      },
      close: async () => {},
    };
    const firstServer = createFixtureServer();
    const a = await mount("node", createMcpHandler(firstServer, { secret: "s", store }));
    const b = await mount("node", createMcpHandler(createFixtureServer(), { secret: "s", store }));
    try {
      const session = await openSession(viaUrl(a.url));
      const held = await fetch(a.url, {
        headers: { ...legacyHeaders(session), accept: "text/event-stream" },
      });
      const first = new SseReader(held.body!);
      await expect.poll(() => first.lastEventId).toBeDefined();
      firstServer.notifyToolsListChanged();
      expect(await first.next()).toEqual(LIST_CHANGED);
      const lastEventId = first.lastEventId!;
      await first.cancel();

      during = () => firstServer.notifyToolsListChanged();
      const resumed = await fetch(b.url, {
        headers: {
          ...legacyHeaders(session),
          accept: "text/event-stream",
          "last-event-id": lastEventId,
        },
      });
      expect(resumed.status).toBe(200);
      const reader = new SseReader(resumed.body!);
      const seen = async () => {
        const message = await reader.next(1_000);
        if (message) assertLegacyMessage(message, "");
        return message;
      };
      // The change made during the takeover arrives, once.
      expect(await seen()).toEqual(LIST_CHANGED);
      expect(await seen()).toBeUndefined();
      // Live from the new holder afterwards, numbered after everything before.
      firstServer.notifyToolsListChanged();
      expect(await seen()).toEqual(LIST_CHANGED);
      const ids = reader.eventIds as string[];
      const counters = [lastEventId, ...ids].map((id) => Number(id.slice(id.lastIndexOf(".") + 1)));
      expect(counters).toEqual([...counters].sort((x, y) => x - y));
      expect(new Set(counters).size).toBe(counters.length);
      await reader.cancel();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
