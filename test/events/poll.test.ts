// events/list and events/poll (SEP-3415), modern era, through fetch, node:http and Express, on
// the memory store and a real Redis; every message checked against the events schema.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { memoryStore } from "../../src/store/memory.js";
import { redisStore } from "../../src/store/redis.js";
import type { McpStore } from "../../src/store/types.js";
import { assertEventsMessage } from "../helpers/events-schema.js";
import {
  createEventsServer,
  NOTE_CREATED,
  principalOf,
  tokenAuth,
} from "../helpers/events-server.js";
import { call, type Send, viaFetch, withBearer } from "../helpers/modern.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { mount, TRANSPORTS } from "../helpers/transports.js";

let redisServer: RedisServer;
const connections: Redis[] = [];
const cleanups: (() => Promise<void>)[] = [];
/** Time between two occurrences a maxAgeMs floor is set between. */
const GAP_MS = 400;

beforeAll(async () => {
  redisServer = await startRedisServer();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const redis of connections) await redis.quit();
  await redisServer?.close();
});

const STORES: Record<string, () => McpStore> = {
  memory: () => memoryStore(),
  redis: () => {
    const redis = new Redis(redisServer.url);
    connections.push(redis);
    return redisStore({ redis, prefix: `ev:${randomUUID()}:` });
  },
};

/** One events request, its messages checked by the era's schema and the events schema. */
async function events(send: Send, method: string, params: Record<string, unknown> = {}) {
  const exchange = await call(send, method, params);
  assertEventsMessage(exchange.response, method);
  return exchange;
}

describe.each(Object.keys(STORES))("events/list and events/poll (%s store)", (storeName) => {
  describe.each(TRANSPORTS)("through %s", (transport) => {
    async function serve(server: McpServer = createEventsServer()) {
      const mcp = createMcpHandler(server, { store: STORES[storeName]!(), events: {} });
      const mounted = await mount(transport, mcp);
      cleanups.push(() => mounted.close());
      return { server, send: mounted.send };
    }

    it("should declare the extension and list each event type with the modes served here", async () => {
      const { send } = await serve();
      const discover = await call(send, "server/discover");
      expect(discover.result.capabilities).toMatchObject({
        extensions: { "io.modelcontextprotocol/events": { listChanged: true } },
      });
      const { result } = await events(send, "events/list");
      expect(result.resultType).toBe("complete");
      expect(result.events).toEqual([
        expect.objectContaining({ name: "note.created", delivery: ["poll", "push"] }),
        expect.objectContaining({
          name: "poll.only",
          delivery: ["poll"],
          inputSchema: { type: "object" },
        }),
        expect.objectContaining({ name: "guarded", delivery: ["poll", "push"] }),
      ]);
      const note = (result.events as Record<string, unknown>[])[0]!;
      expect(note.payloadSchema).toMatchObject({ required: ["id"] });
    });

    it("should start from now on a null cursor, then return what was emitted after it, in order", async () => {
      const { server, send } = await serve();
      await server.emit("note.created", { id: "before" });
      const first = await events(send, "events/poll", { name: "note.created", cursor: null });
      expect(first.result).toMatchObject({
        events: [],
        truncated: false,
        hasMore: false,
        nextPollMs: 10_000,
      });
      for (const id of ["a", "b", "c"]) await server.emit("note.created", { id });
      const second = await events(send, "events/poll", {
        name: "note.created",
        cursor: first.result.cursor,
      });
      const occurrences = second.result.events as Record<string, unknown>[];
      expect(occurrences.map((o) => (o.data as { id: string }).id)).toEqual(["a", "b", "c"]);
      expect(occurrences[0]).toMatchObject({ name: "note.created", eventId: expect.any(String) });
      expect(second.result.truncated).toBe(false);
      // Nothing new: the same cursor back, and no events.
      const third = await events(send, "events/poll", {
        name: "note.created",
        cursor: second.result.cursor,
      });
      expect(third.result).toMatchObject({ events: [], cursor: second.result.cursor });
    });

    it("should cap a poll at maxEvents and say hasMore until the backlog is drained", async () => {
      const { server, send } = await serve();
      const start = await events(send, "events/poll", { name: "note.created" });
      for (let i = 0; i < 5; i++) await server.emit("note.created", { id: `n${i}` });
      const seen: string[] = [];
      let cursor = start.result.cursor;
      const hasMore: boolean[] = [];
      for (let polls = 0; polls < 4; polls++) {
        const { result } = await events(send, "events/poll", {
          name: "note.created",
          cursor,
          maxEvents: 2,
        });
        seen.push(...(result.events as { data: { id: string } }[]).map((o) => o.data.id));
        hasMore.push(result.hasMore as boolean);
        cursor = result.cursor;
        if (!result.hasMore) break;
      }
      expect(seen).toEqual(["n0", "n1", "n2", "n3", "n4"]);
      expect(hasMore).toEqual([true, true, false]);
    });

    it("should apply match and transform per subscription, and targeted arguments exactly", async () => {
      const { server, send } = await serve();
      const red = await events(send, "events/poll", {
        name: "note.created",
        arguments: { tag: "red", redact: true },
      });
      const all = await events(send, "events/poll", { name: "note.created", arguments: {} });
      await server.emit("note.created", { id: "1", tag: "red", author: "ana" });
      await server.emit("note.created", { id: "2", tag: "blue", author: "bo" });
      await server.emit(
        "note.created",
        { id: "3", author: "cy" },
        { arguments: { tag: "red", redact: true } },
      );
      const redPoll = await events(send, "events/poll", {
        name: "note.created",
        arguments: { redact: true, tag: "red" },
        cursor: red.result.cursor,
      });
      // match keeps tag red only (the targeted one has none, but its arguments are these).
      expect(redPoll.result.events).toEqual([
        expect.objectContaining({ data: { id: "1", tag: "red", author: "-" } }),
      ]);
      const allPoll = await events(send, "events/poll", {
        name: "note.created",
        cursor: all.result.cursor,
      });
      expect((allPoll.result.events as { data: { id: string } }[]).map((o) => o.data.id)).toEqual([
        "1",
        "2",
      ]);
    });

    it("should say truncated, with a fresh cursor, when the feed lost occurrences after the cursor", async () => {
      const { server, send } = await serve(createEventsServer({ maxLen: 2 }));
      const start = await events(send, "events/poll", { name: "note.created" });
      for (const id of ["a", "b", "c", "d"]) await server.emit("note.created", { id });
      const { result } = await events(send, "events/poll", {
        name: "note.created",
        cursor: start.result.cursor,
      });
      expect(result.truncated).toBe(true);
      expect((result.events as { data: { id: string } }[]).map((o) => o.data.id)).toEqual([
        "c",
        "d",
      ]);
      const after = await events(send, "events/poll", {
        name: "note.created",
        cursor: result.cursor,
      });
      expect(after.result).toMatchObject({ events: [], truncated: false });
    });

    it("should not replay what is older than maxAgeMs, and say truncated", async () => {
      const { server, send } = await serve();
      const start = await events(send, "events/poll", { name: "note.created" });
      await server.emit("note.created", { id: "old" });
      // Taken once the first is appended: it is no later than this.
      const old = Date.now();
      await expect.poll(() => Date.now() - old, { interval: 20 }).toBeGreaterThan(GAP_MS);
      await server.emit("note.created", { id: "new" });
      // A floor just after the first: the second, appended more than GAP_MS later, is within
      // it however long the poll takes to arrive (up to GAP_MS), so no tight window either way.
      const { result } = await events(send, "events/poll", {
        name: "note.created",
        cursor: start.result.cursor,
        maxAgeMs: Date.now() - old - 1,
      });
      expect(result.truncated).toBe(true);
      expect((result.events as { data: { id: string } }[]).map((o) => o.data.id)).toEqual(["new"]);
    });

    it("should keep one occurrence of an eventId emitted twice", async () => {
      const { server, send } = await serve();
      const start = await events(send, "events/poll", { name: "note.created" });
      const first = await server.emit("note.created", { id: "1" }, { eventId: "upstream-1" });
      const again = await server.emit("note.created", { id: "1" }, { eventId: "upstream-1" });
      expect(again).toEqual(first);
      const { result } = await events(send, "events/poll", {
        name: "note.created",
        cursor: start.result.cursor,
      });
      expect(result.events).toEqual([expect.objectContaining({ eventId: "upstream-1" })]);
    });

    it("should keep the first data of an eventId emitted twice with other data", async () => {
      const { server, send } = await serve();
      const start = await events(send, "events/poll", { name: "note.created" });
      const first = await server.emit("note.created", { id: "first" }, { eventId: "upstream-2" });
      const again = await server.emit("note.created", { id: "second" }, { eventId: "upstream-2" });
      expect(again).toEqual(first);
      const { result } = await events(send, "events/poll", {
        name: "note.created",
        cursor: start.result.cursor,
      });
      expect(result.events).toEqual([
        expect.objectContaining({ eventId: "upstream-2", data: { id: "first" } }),
      ]);
    });

    it("should page events/list as tools/list pages", async () => {
      const paged = new McpServer({ name: "paged", version: "1.0.0", pageSize: 2 });
      paged.event(NOTE_CREATED);
      paged.event({ name: "poll.only", delivery: ["poll"] });
      paged.event({ name: "guarded" });
      const { send } = await serve(paged);
      const first = await events(send, "events/list");
      expect((first.result.events as unknown[]).length).toBe(2);
      const second = await events(send, "events/list", { cursor: first.result.nextCursor });
      expect(second.result.events).toEqual([expect.objectContaining({ name: "guarded" })]);
      expect(second.result.nextCursor).toBeUndefined();
    });

    it("should answer the errors SEP-3415 names", async () => {
      const { send } = await serve();
      const unknown = await events(send, "events/poll", { name: "nope" });
      expect(unknown.error).toMatchObject({ code: -32023, data: { kind: "event" } });
      const badArgs = await events(send, "events/poll", {
        name: "note.created",
        arguments: { color: 1 },
      });
      expect(badArgs.error?.code).toBe(-32602);
      const forbidden = await events(send, "events/poll", {
        name: "guarded",
        arguments: { room: "private" },
      });
      expect(forbidden.error?.code).toBe(-32024);
      const tampered = await events(send, "events/poll", {
        name: "note.created",
        cursor: "bm90LWEtY3Vyc29y",
      });
      expect(tampered.error?.code).toBe(-32602);
      const other = await events(send, "events/poll", { name: "poll.only" });
      const crossed = await events(send, "events/poll", {
        name: "note.created",
        cursor: other.result.cursor,
      });
      expect(crossed.error?.code).toBe(-32602);
      const pushOnly = await events(send, "events/stream", { name: "poll.only" });
      expect(pushOnly.error).toMatchObject({
        code: -32026,
        data: { feature: "deliveryMode", value: "push" },
      });
    });
  });
});

describe("events/poll with principals", () => {
  it("should deliver an occurrence targeted at a principal to that principal's polls only", async () => {
    const server = createEventsServer();
    const mcp = createMcpHandler(server, { auth: tokenAuth() });
    cleanups.push(() => mcp.close());
    const as = (token: string) => withBearer(viaFetch(mcp.fetch), token);
    const ana = await events(as("ana"), "events/poll", { name: "note.created" });
    const bo = await events(as("bo"), "events/poll", { name: "note.created" });
    await server.emit("note.created", { id: "for-ana" }, { principal: principalOf("ana") });
    await server.emit("note.created", { id: "for-all" });
    const anaPoll = await events(as("ana"), "events/poll", {
      name: "note.created",
      cursor: ana.result.cursor,
    });
    const boPoll = await events(as("bo"), "events/poll", {
      name: "note.created",
      cursor: bo.result.cursor,
    });
    const ids = (result: Record<string, unknown>) =>
      (result.events as { data: { id: string } }[]).map((o) => o.data.id);
    expect(ids(anaPoll.result)).toEqual(["for-ana", "for-all"]);
    expect(ids(boPoll.result)).toEqual(["for-all"]);
  });
});
