// Events in a legacy (2025-11-25) session, which SEP-3415 does not define but the issue asks
// for: declared in initialize, poll and push served inside the session, results without
// resultType; through fetch, node:http and Express, on the memory store and a real Redis.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { memoryStore } from "../../src/store/memory.js";
import { redisStore } from "../../src/store/redis.js";
import type { McpStore } from "../../src/store/types.js";
import { assertEventsEra } from "../helpers/events-schema.js";
import { createEventsServer, openEventStream } from "../helpers/events-server.js";
import { LEGACY_VERSION, legacyCall, legacyHeaders, readLegacy } from "../helpers/legacy.js";
import type { Send } from "../helpers/modern.js";
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

/** An events request in the session, checked by the legacy schema and the events schema. */
async function inSession(
  send: Send,
  session: string,
  method: string,
  params: Record<string, unknown>,
) {
  const exchange = await legacyCall(send, session, method, params);
  assertEventsEra("legacy", exchange.response, method);
  return exchange;
}

let nextId = 1000;

describe.each(Object.keys(STORES))("Events in a legacy session (%s store)", (storeName) => {
  describe.each(TRANSPORTS)("through %s", (transport) => {
    async function serve() {
      const store = STORES[storeName]!();
      const server = createEventsServer();
      const mcp = createMcpHandler(server, { store });
      const mounted = await mount(transport, mcp);
      cleanups.push(() => mounted.close());
      const fetcher = transport === "fetch" ? mcp.fetch : (request: Request) => fetch(request);
      return { server, store, mcp, send: mounted.send, url: mounted.url, fetcher };
    }

    async function initialize(send: Send) {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: nextId++,
          method: "initialize",
          params: {
            protocolVersion: LEGACY_VERSION,
            capabilities: {},
            clientInfo: { name: "t", version: "0" },
          },
        }),
      });
      const exchange = readLegacy(response, "initialize");
      const session = response.headers.get("mcp-session-id")!;
      await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      });
      return { session, result: exchange.result };
    }

    it("should declare the extension in initialize and poll inside the session", async () => {
      const { server, send } = await serve();
      const { session, result } = await initialize(send);
      expect(result.capabilities).toMatchObject({
        extensions: { "io.modelcontextprotocol/events": { listChanged: true } },
      });
      const list = await inSession(send, session, "events/list", {});
      expect((list.result.events as { name: string }[]).map((e) => e.name)).toEqual([
        "note.created",
        "poll.only",
        "guarded",
      ]);
      const first = await inSession(send, session, "events/poll", { name: "note.created" });
      await server.emit("note.created", { id: "1" });
      const second = await inSession(send, session, "events/poll", {
        name: "note.created",
        cursor: first.result.cursor,
      });
      expect(second.result.events).toEqual([expect.objectContaining({ data: { id: "1" } })]);
      const unknown = await inSession(send, session, "events/poll", { name: "nope" });
      expect(unknown.error?.code).toBe(-32023);
    });

    it("should push on the request's SSE stream, and stop when the client closes it", async () => {
      const { server, store, send, url, fetcher } = await serve();
      const { session } = await initialize(send);
      const id = nextId++;
      const controller = new AbortController();
      const response = await fetcher(
        new Request(url, {
          method: "POST",
          headers: legacyHeaders(session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "events/stream",
            params: { name: "note.created" },
          }),
          signal: controller.signal,
        }),
      );
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const reader = new SseReader(response.body!);
      const next = async () => {
        const message = await reader.next(5_000);
        assertEventsEra("legacy", message!, "events/stream");
        return message!;
      };
      expect(await next()).toMatchObject({ method: "notifications/events/active" });
      await server.emit("note.created", { id: "pushed" });
      expect(await next()).toMatchObject({
        method: "notifications/events/event",
        params: { data: { id: "pushed" }, _meta: { "io.modelcontextprotocol/subscriptionId": id } },
      });
      controller.abort();
      await reader.cancel();
      // Its wake-ups stop once the stream ended: nobody hears the event type's channel any more.
      if (storeName === "memory")
        await expect.poll(() => store.bus.publish("events:note.created", { s: "0-0" })).toBe(0);
    });

    it("should end a stream cancelled by notifications/cancelled", async () => {
      const { send, url, fetcher } = await serve();
      const { session } = await initialize(send);
      const id = nextId++;
      const response = await fetcher(
        new Request(url, {
          method: "POST",
          headers: legacyHeaders(session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "events/stream",
            params: { name: "note.created" },
          }),
        }),
      );
      const reader = new SseReader(response.body!);
      expect(await reader.next(5_000)).toMatchObject({ method: "notifications/events/active" });
      const cancelled = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id },
        }),
      });
      expect(cancelled.status).toBe(202);
      await expect.poll(() => reader.ended, { timeout: 5_000 }).toBe(true);
      await reader.cancel();
    });

    it("should answer a stream with its result when the endpoint drains", async () => {
      const { mcp, send, url, fetcher } = await serve();
      const { session } = await initialize(send);
      const id = nextId++;
      const response = await fetcher(
        new Request(url, {
          method: "POST",
          headers: legacyHeaders(session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "events/stream",
            params: { name: "note.created" },
          }),
        }),
      );
      const reader = new SseReader(response.body!);
      expect(await reader.next(5_000)).toMatchObject({ method: "notifications/events/active" });
      const closing = mcp.close({ graceMs: 5_000 });
      const last = await reader.next(5_000);
      assertEventsEra("legacy", last!, "events/stream");
      expect(last).toEqual({
        jsonrpc: "2.0",
        id,
        result: { _meta: { "io.modelcontextprotocol/subscriptionId": id } },
      });
      await closing;
      await reader.cancel();
    });

    it("should not send event-type changes on the session's GET stream, which cannot opt in", async () => {
      const { server, send, url, fetcher } = await serve();
      const { session } = await initialize(send);
      const response = await fetcher(
        new Request(url, {
          method: "GET",
          headers: { ...legacyHeaders(session), accept: "text/event-stream" },
        }),
      );
      expect(response.status).toBe(200);
      const reader = new SseReader(response.body!);
      // The stream is live once primed (2025-11-25): its first event has an id and no data.
      await expect.poll(() => reader.lastEventId, { timeout: 5_000 }).toBeDefined();
      server.event({ name: "added.later" });
      server.notifyToolsListChanged();
      const next = await reader.next(5_000);
      assertEventsEra("legacy", next!, "notification");
      expect(next?.method).toBe("notifications/tools/list_changed");
      await reader.cancel();
    });
  });
});

/** A legacy session over `send`, initialized; its id. */
async function openSession(send: Send): Promise<string> {
  const response = await send({
    method: "POST",
    headers: legacyHeaders(),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method: "initialize",
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: "t", version: "0" },
      },
    }),
  });
  readLegacy(response, "initialize");
  return response.headers.get("mcp-session-id")!;
}

/** Posts an events/stream request in `session` over a real socket; the raw response. */
function openLegacyStream(
  url: string,
  session: string,
  id: number,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(
    new Request(url, {
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "events/stream", params }),
      signal,
    }),
  );
}

describe("events/stream in a legacy session and the stream slots", () => {
  it("should hold a slot per stream, refused past the per-client cap as in the modern era", async () => {
    const mcp = createMcpHandler(createEventsServer(), { maxStreamsPerClient: 1 });
    // Over a socket, so the caller is told apart by its address.
    const mounted = await mount("node", mcp);
    cleanups.push(() => mounted.close());
    const fetcher = (request: Request) => fetch(request);
    const session = await openSession(mounted.send);
    const openLegacy = (id: number, signal?: AbortSignal) =>
      openLegacyStream(mounted.url, session, id, { name: "note.created" }, signal);
    const controller = new AbortController();
    const held = await openLegacy(nextId++, controller.signal);
    const reader = new SseReader(held.body!);
    cleanups.push(async () => {
      controller.abort();
      await reader.cancel();
    });
    expect(await reader.next(5_000)).toMatchObject({ method: "notifications/events/active" });
    const refusedId = nextId++;
    const refused = await openLegacy(refusedId);
    cleanups.push(async () => {
      if (!refused.bodyUsed) await refused.body?.cancel();
    });
    expect(refused.headers.get("content-type")).toBe("application/json");
    const body = (await refused.json()) as Record<string, unknown>;
    assertEventsEra("legacy", body, "events/stream");
    // The modern era's answer to the same client, whose one slot the legacy stream holds.
    const modern = await openEventStream(fetcher, mounted.url, { name: "note.created" });
    const modernBody = await modern.next();
    expect(modern.status).toBe(429);
    expect(refused.status).toBe(modern.status);
    expect(refused.headers.get("retry-after")).toBe(modern.headers.get("retry-after"));
    expect(body).toEqual({ ...modernBody, id: refusedId });
  });
});

describe("events/stream in a legacy session replaying a backlog", () => {
  it("should pace a backlog larger than the slow-reader guard to its reader, over node:http", async () => {
    // 6 MiB of occurrences, past the 4 MiB an SSE stream lets a reader leave unread.
    const count = 400;
    const pad = "x".repeat(16 * 1024);
    const server = createEventsServer({ maxLen: count * 2 });
    const mcp = createMcpHandler(server, { store: memoryStore() });
    const mounted = await mount("node", mcp);
    cleanups.push(() => mounted.close());
    const session = await openSession(mounted.send);
    const start = await inSession(mounted.send, session, "events/poll", { name: "note.created" });
    for (let i = 0; i < count; i++) await server.emit("note.created", { id: `e${i}`, tag: pad });
    const controller = new AbortController();
    const response = await openLegacyStream(
      mounted.url,
      session,
      nextId++,
      { name: "note.created", cursor: start.result.cursor },
      controller.signal,
    );
    const reader = new SseReader(response.body!);
    cleanups.push(async () => {
      controller.abort();
      await reader.cancel();
    });
    const active = await reader.next(5_000);
    assertEventsEra("legacy", active!, "events/stream");
    expect(active?.method).toBe("notifications/events/active");
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const message = await reader.next(5_000);
      expect(message?.method).toBe("notifications/events/event");
      assertEventsEra("legacy", message!, "events/stream");
      ids.push((message!.params as { data: { id: string } }).data.id);
    }
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => `e${i}`));
  });
});
