// events/stream (SEP-3415, push), modern era, through fetch, node:http and Express, on the memory
// store and a real Redis: every message checked against the events schema.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, type McpHandler, McpServer } from "../../src/index.js";
import { memoryStore } from "../../src/store/memory.js";
import { redisStore } from "../../src/store/redis.js";
import type { McpStore } from "../../src/store/types.js";
import { assertEventsMessage } from "../helpers/events-schema.js";
import {
  createEventsServer,
  type Fetcher,
  type OpenStream,
  openEventStream,
  principalOf,
  tokenAuth,
} from "../helpers/events-server.js";
import { assertModernMessage } from "../helpers/spec.js";
import { call, modernHeaders, modernMeta, viaFetch } from "../helpers/modern.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { SseReader } from "../helpers/stream.js";
import { mount, TRANSPORTS } from "../helpers/transports.js";

let redisServer: RedisServer;
const connections: Redis[] = [];
const cleanups: (() => Promise<void>)[] = [];

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

const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

/** The next message, which must be `method`; returns its params. */
async function expectNext(stream: OpenStream, method: string): Promise<Record<string, unknown>> {
  const message = await stream.next();
  expect(message?.method).toBe(method);
  const params = message!.params as Record<string, unknown>;
  expect((params._meta as Record<string, unknown>)[SUBSCRIPTION]).toBe(stream.id);
  return params;
}

/** The ids of the next `count` events. */
async function nextIds(stream: OpenStream, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const params = await expectNext(stream, "notifications/events/event");
    ids.push((params.data as { id: string }).id);
  }
  return ids;
}

describe.each(Object.keys(STORES))("events/stream (%s store)", (storeName) => {
  describe.each(TRANSPORTS)("through %s", (transport) => {
    async function serve(
      options: {
        server?: McpServer;
        auth?: boolean;
        heartbeatMs?: number;
        onError?: (error: unknown) => void;
      } = {},
    ) {
      const server = options.server ?? createEventsServer();
      const store = STORES[storeName]!();
      const mcp = createMcpHandler(server, {
        store,
        events: { heartbeatMs: options.heartbeatMs ?? 60_000 },
        ...(options.auth && { auth: tokenAuth() }),
        ...(options.onError && { onError: options.onError }),
      });
      const mounted = await mount(transport, mcp);
      cleanups.push(() => mounted.close());
      // Change events reach this process's listen streams once its hub hears the bus.
      await mcp.ready;
      const fetcher: Fetcher = transport === "fetch" ? mcp.fetch : (request) => fetch(request);
      const streams: OpenStream[] = [];
      cleanups.push(async () => {
        for (const stream of streams) await stream.cancel();
      });
      const open = async (params: Record<string, unknown>, token?: string) => {
        const stream = await openEventStream(fetcher, mounted.url, params, token);
        streams.push(stream);
        return stream;
      };
      return { server, store, mcp, mounted, fetcher, open };
    }

    it("should confirm with active, then send each occurrence in order with its cursor", async () => {
      const { server, open } = await serve();
      const stream = await open({ name: "note.created" });
      expect(stream.status).toBe(200);
      const active = await expectNext(stream, "notifications/events/active");
      expect(active).toMatchObject({ truncated: false, cursor: expect.any(String) });
      for (const id of ["a", "b", "c"]) await server.emit("note.created", { id, tag: "x" });
      const cursors: string[] = [];
      for (const id of ["a", "b", "c"]) {
        const event = await expectNext(stream, "notifications/events/event");
        expect(event).toMatchObject({ name: "note.created", data: { id, tag: "x" } });
        cursors.push(event.cursor as string);
      }
      expect(new Set(cursors).size).toBe(3);
    });

    it("should send heartbeats carrying the position checked up to", async () => {
      const { server, open } = await serve({ heartbeatMs: 100 });
      const stream = await open({ name: "note.created", arguments: { tag: "mine" } });
      await expectNext(stream, "notifications/events/active");
      // Not for this subscription: no event, but the heartbeat's cursor moves past it.
      const { cursor: passed } = await server.emit("note.created", { id: "other", tag: "theirs" });
      let heartbeat = await expectNext(stream, "notifications/events/heartbeat");
      while (heartbeat.cursor !== passed)
        heartbeat = await expectNext(stream, "notifications/events/heartbeat");
      expect(heartbeat.cursor).toBe(passed);
    });

    it("should read on its heartbeat what no wake-up announced", async () => {
      const { store, open } = await serve({ heartbeatMs: 100 });
      const stream = await open({ name: "note.created" });
      await expectNext(stream, "notifications/events/active");
      // Appended behind the extension's back: no bus wake-up, only the heartbeat's read finds it.
      const occurrence = {
        eventId: "quiet",
        name: "note.created",
        timestamp: new Date().toISOString(),
        data: { id: "quiet" },
      };
      await store.feeds!.append("note.created", occurrence, { maxLen: 100, maxAgeMs: 60_000 });
      let message = await stream.next();
      while (message?.method === "notifications/events/heartbeat") message = await stream.next();
      expect(message).toMatchObject({
        method: "notifications/events/event",
        params: { eventId: "quiet" },
      });
    });

    it("should start with active truncated when the cursor is older than the feed keeps", async () => {
      const { server, open } = await serve({ server: createEventsServer({ maxLen: 2 }) });
      const first = await open({ name: "note.created" });
      const active = await expectNext(first, "notifications/events/active");
      await first.cancel();
      for (const id of ["a", "b", "c", "d"]) await server.emit("note.created", { id });
      const second = await open({ name: "note.created", cursor: active.cursor });
      expect(await expectNext(second, "notifications/events/active")).toMatchObject({
        truncated: true,
      });
      expect(await nextIds(second, 2)).toEqual(["c", "d"]);
    });

    it("should resume from a cursor after the connection dropped, losing and doubling nothing", async () => {
      const { server, open } = await serve();
      const first = await open({ name: "note.created" });
      await expectNext(first, "notifications/events/active");
      await server.emit("note.created", { id: "1" });
      const one = await expectNext(first, "notifications/events/event");
      await first.cancel();
      for (const id of ["2", "3"]) await server.emit("note.created", { id });
      const second = await open({ name: "note.created", cursor: one.cursor });
      const active = await expectNext(second, "notifications/events/active");
      expect(active.truncated).toBe(false);
      await server.emit("note.created", { id: "4" });
      expect(await nextIds(second, 3)).toEqual(["2", "3", "4"]);
    });

    it("should deliver a principal's occurrences to its streams only", async () => {
      const { server, open } = await serve({ auth: true });
      const ana = await open({ name: "note.created" }, "ana");
      const bo = await open({ name: "note.created" }, "bo");
      await expectNext(ana, "notifications/events/active");
      await expectNext(bo, "notifications/events/active");
      await server.emit("note.created", { id: "for-ana" }, { principal: principalOf("ana") });
      await server.emit("note.created", { id: "for-all" });
      expect(await nextIds(ana, 2)).toEqual(["for-ana", "for-all"]);
      expect(await nextIds(bo, 1)).toEqual(["for-all"]);
    });

    it("should report a transform that failed as events/error and go on with the next", async () => {
      const server = createEventsServer();
      server.event({
        name: "flaky",
        transform: (_ctx, occurrence) => {
          if (occurrence.data.boom) throw new Error("upstream fetch failed");
          return occurrence;
        },
      });
      const errors: unknown[] = [];
      const { open } = await serve({ server, onError: (error) => errors.push(error) });
      const stream = await open({ name: "flaky" });
      await expectNext(stream, "notifications/events/active");
      await server.emit("flaky", { boom: true });
      await server.emit("flaky", { fine: true });
      const error = await expectNext(stream, "notifications/events/error");
      expect(error.error).toMatchObject({ code: -32603 });
      expect(await expectNext(stream, "notifications/events/event")).toMatchObject({
        data: { fine: true },
      });
      expect(errors).toEqual([expect.objectContaining({ message: "upstream fetch failed" })]);
    });

    it("should end streams with terminated (NotFound) when their event type is removed", async () => {
      const server = createEventsServer();
      const gone = server.event({ name: "gone" });
      const { open } = await serve({ server });
      const stream = await open({ name: "gone" });
      await expectNext(stream, "notifications/events/active");
      gone.remove();
      const terminated = await expectNext(stream, "notifications/events/terminated");
      expect(terminated.error).toMatchObject({ code: -32023, data: { kind: "event" } });
      const last = await stream.next();
      expect(last).toMatchObject({ id: stream.id, result: { resultType: "complete" } });
      expect(await stream.next(500)).toBeUndefined();
    });

    it("should end every stream with its result when the endpoint drains", async () => {
      const { mcp, open } = await serve();
      const stream = await open({ name: "note.created" });
      await expectNext(stream, "notifications/events/active");
      const closing = mcp.close({ graceMs: 5_000 });
      const result = await stream.next();
      expect(result).toMatchObject({
        id: stream.id,
        result: { resultType: "complete", _meta: { [SUBSCRIPTION]: stream.id } },
      });
      await closing;
    });

    it("should tell listen streams that asked for eventsListChanged when event types change", async () => {
      const { server, fetcher, mounted } = await serve();
      const listen = await openListen(fetcher, mounted.url, { eventsListChanged: true });
      const ack = await listen.next();
      expect(ack).toMatchObject({
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { eventsListChanged: true } },
      });
      server.event({ name: "later" });
      const changed = await listen.next();
      expect(changed?.method).toBe("notifications/events/list_changed");
      assertEventsMessage(changed!);
      await listen.cancel();
    });
  });
});

describe("eventsListChanged without event types", () => {
  it("should be left out of the acknowledgement, and events/* not found, when none is registered", async () => {
    const mcp: McpHandler = createMcpHandler(
      new McpServer({ name: "no-events", version: "1.0.0" }),
    );
    cleanups.push(() => mcp.close());
    const listen = await openListen(mcp.fetch, "http://127.0.0.1/mcp", {
      eventsListChanged: true,
      toolsListChanged: true,
    });
    const ack = await listen.next();
    expect(ack?.params).toEqual({
      notifications: { toolsListChanged: true },
      _meta: expect.anything(),
    });
    const list = await call(viaFetch(mcp.fetch), "events/list");
    expect(list.error?.code).toBe(-32601);
    await listen.cancel();
  });
});

/** Opens a modern listen stream with `notifications`; messages come validated as modern ones. */
async function openListen(fetcher: Fetcher, url: string, notifications: Record<string, unknown>) {
  const response = await fetcher(
    new Request(url, {
      method: "POST",
      headers: modernHeaders("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "listen-1",
        method: "subscriptions/listen",
        params: { notifications, _meta: modernMeta() },
      }),
    }),
  );
  expect(response.status).toBe(200);
  const reader = new SseReader(response.body!);
  return {
    async next() {
      const message = await reader.next(5_000);
      if (message && !String(message.method).startsWith("notifications/events/"))
        assertModernMessage(message, "subscriptions/listen");
      return message;
    },
    cancel: () => reader.cancel(),
  };
}

describe("events/stream and the stream slots", () => {
  it("should hold a slot per open stream, as listen streams do, and give it back when it ends", async () => {
    const mcp = createMcpHandler(createEventsServer(), { maxStreams: 1 });
    cleanups.push(() => mcp.close());
    const url = "http://127.0.0.1/mcp";
    const first = await openEventStream(mcp.fetch, url, { name: "note.created" });
    expect((await first.next())?.method).toBe("notifications/events/active");
    const refused = await openEventStream(mcp.fetch, url, { name: "note.created" });
    expect(refused.status).toBe(503);
    await first.cancel();
    await expect
      .poll(async () => {
        const again = await openEventStream(mcp.fetch, url, { name: "note.created" });
        await again.cancel();
        return again.status;
      })
      .toBe(200);
  });
});

describe("events/stream replaying a backlog", () => {
  it("should pace a backlog larger than the slow-reader guard to its reader, over node:http", async () => {
    // 6 MiB of occurrences, past the 4 MiB an SSE stream lets a reader leave unread.
    const count = 400;
    const pad = "x".repeat(16 * 1024);
    const server = createEventsServer({ maxLen: count * 2 });
    const mcp = createMcpHandler(server, { store: memoryStore(), events: { heartbeatMs: 60_000 } });
    const mounted = await mount("node", mcp);
    cleanups.push(() => mounted.close());
    await mcp.ready;
    const fetcher: Fetcher = (request) => fetch(request);
    const first = await openEventStream(fetcher, mounted.url, { name: "note.created" });
    const active = await expectNext(first, "notifications/events/active");
    await first.cancel();
    for (let i = 0; i < count; i++) await server.emit("note.created", { id: `e${i}`, tag: pad });
    const stream = await openEventStream(fetcher, mounted.url, {
      name: "note.created",
      cursor: active.cursor,
    });
    cleanups.push(() => stream.cancel());
    await expectNext(stream, "notifications/events/active");
    const ids = await nextIds(stream, count);
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => `e${i}`));
  });
});

describe("events/stream and a drain", () => {
  it("should end a stream still starting when the drain ended the streams", async () => {
    const store = memoryStore();
    const feeds = store.feeds!;
    const head = feeds.head.bind(feeds);
    // Holds the stream where it reads where to start, until the drain has ended the streams.
    let starting = false;
    let go!: () => void;
    const held = new Promise<void>((resolve) => {
      go = resolve;
    });
    feeds.head = async (name) => {
      starting = true;
      await held;
      return head(name);
    };
    const mcp = createMcpHandler(createEventsServer(), { store });
    cleanups.push(() => mcp.close());
    await mcp.ready;
    const url = "http://127.0.0.1/mcp";
    const listen = await openListen(mcp.fetch, url, { toolsListChanged: true });
    await listen.next();
    const opening = openEventStream(mcp.fetch, url, { name: "note.created" });
    await expect.poll(() => starting).toBe(true);
    const closing = mcp.close({ graceMs: 20_000 });
    // Listen streams end in the same step as the extension's: once this one has, so have they.
    expect(await listen.next()).toMatchObject({ id: "listen-1", result: expect.anything() });
    go();
    const stream = await opening;
    expect((await stream.next())?.method).toBe("notifications/events/active");
    expect(await stream.next()).toMatchObject({
      id: stream.id,
      result: { resultType: "complete", _meta: { [SUBSCRIPTION]: stream.id } },
    });
    await closing;
  });
});
