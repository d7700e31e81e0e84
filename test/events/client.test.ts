// McpClient's events API (SEP-3415) against our server on node:http (127.0.0.1), both eras:
// listing, one poll, the poll loop, push streams that reconnect from their cursor, a stream
// gone silent, termination, refusals. Every message of an events response, JSON or SSE, is
// checked against the events schema and the era's as the client reads it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler, type McpServer } from "../../src/index.js";
import type { EventsOptions } from "../../src/server/ext/events/types.js";
import { assertEventsEra, assertEventsSchema } from "../helpers/events-schema.js";
import { createEventsServer } from "../helpers/events-server.js";

const cleanups: (() => Promise<void>)[] = [];
/** What a message the server sent broke of the events schema or the era's. */
const invalid: unknown[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  expect(invalid.splice(0)).toEqual([]);
});

/** Checks every JSON-RPC message of an events response, JSON or SSE, as the client reads it. */
async function checkMessages(era: "modern" | "legacy", method: string, response: Response) {
  const check = (text: string) => {
    try {
      assertEventsEra(era, JSON.parse(text), method);
    } catch (error) {
      invalid.push(error);
    }
  };
  if (!response.body) return;
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
    check(await response.text());
    return;
  }
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let buffer = "";
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffer += decoder.decode(read.value, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        // A priming event (legacy resumability) carries an id and empty data.
        const data = line.startsWith("data:") ? line.slice(5).trim() : "";
        if (data) check(data);
      }
    }
  } catch {
    // The stream was cut or aborted: what came before it was checked.
  }
}

/** Every `events/stream` request the client sent: its params, and a gate it waits at. */
interface StreamRequests {
  params: Record<string, unknown>[];
  /** When set, the next `events/stream` request waits for it to resolve before it is sent. */
  gate: Promise<void> | undefined;
}

/** Our events server on a real socket, and a client's fetch that watches `events/stream`. */
async function serve(era: "modern" | "legacy", events: EventsOptions = {}) {
  const server = createEventsServer();
  const mcp = createMcpHandler(server, { legacy: true, events: { pollIntervalMs: 20, ...events } });
  const handle = toNodeHandler(mcp);
  const http = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const streams: StreamRequests = { params: [], gate: undefined };
  const watching: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    if (body?.method === "events/stream") {
      streams.params.push(body.params);
      await streams.gate;
    }
    const response = await fetch(input, init);
    const method: unknown = body?.method;
    if (typeof method !== "string" || !method.startsWith("events/") || !response.body) {
      return response;
    }
    const [mine, checked] = response.body.tee();
    void checkMessages(era, method, new Response(checked, { headers: response.headers }));
    return new Response(mine, { status: response.status, headers: response.headers });
  };
  const client = await McpClient.connect(url, { era, fetch: watching, eraCache: false });
  cleanups.push(async () => {
    await client.close();
    await mcp.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { server, client, streams, cut: () => http.closeAllConnections() };
}

const emitNote = (server: McpServer, id: string, tag = "a") =>
  server.emit("note.created", { id, tag, author: "ann" });

describe.each(["modern", "legacy"] as const)("McpClient events (%s era)", (era) => {
  it("should list the event types with their delivery modes", async () => {
    const { client } = await serve(era);
    const events = await client.events();
    assertEventsSchema("ListEventsResult", {
      events,
      ...(era === "modern" ? { resultType: "complete" } : {}),
    });
    expect(events.map((event) => [event.name, event.delivery])).toEqual([
      ["note.created", ["poll", "push"]],
      ["poll.only", ["poll"]],
      ["guarded", ["poll", "push"]],
    ]);
    expect(events[0]!.description).toBe("A note was created");
  });

  it("should poll once from now, then from the cursor it was given", async () => {
    const { client, server } = await serve(era);
    const first = await client.pollEvents("note.created");
    expect(first).toMatchObject({ events: [], truncated: false, hasMore: false, nextPollMs: 20 });
    await emitNote(server, "n1");
    const second = await client.pollEvents("note.created", {}, { cursor: first.cursor });
    expect(second.events.map((event) => event.data)).toEqual([
      { id: "n1", tag: "a", author: "ann" },
    ]);
    assertEventsSchema("PollEventsResult", second);
  });

  it("should run a poll loop: filtered by arguments, backlogs drained, each event once", async () => {
    const { client, server } = await serve(era);
    const cursors: (string | null)[] = [];
    const sub = await client.subscribeEvents(
      "note.created",
      { tag: "a" },
      { delivery: "poll", maxEvents: 1, minPollMs: 10, onCursor: (c) => cursors.push(c) },
    );
    expect(sub.delivery).toBe("poll");
    // The first poll's position is taken at once: nothing is queued before it.
    expect(sub.cursor).toBeTypeOf("string");
    for (const [id, tag] of [
      ["n1", "a"],
      ["n2", "b"],
      ["n3", "a"],
      ["n4", "a"],
    ]) {
      await emitNote(server, id!, tag);
    }
    const seen: string[] = [];
    for await (const event of sub) {
      seen.push(String(event.data.id));
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(["n1", "n3", "n4"]);
    // The cursor moved past the first two (the app asked for the next one), not the third.
    const resumed = await client.pollEvents("note.created", { tag: "a" }, { cursor: sub.cursor });
    expect(resumed.events.map((event) => event.data.id)).toEqual(["n4"]);
    expect(cursors.at(-1)).toBe(sub.cursor);
  });

  it("should stream by push and reconnect from its cursor each time the connection drops", async () => {
    const { client, server, streams, cut } = await serve(era);
    const sub = await client.subscribeEvents(
      "note.created",
      {},
      {
        delivery: "push",
        // One attempt in a row: each stream confirmed (active) starts the count again.
        reconnect: { initialDelayMs: 10, maxDelayMs: 50, maxAttempts: 1 },
      },
    );
    expect(sub.delivery).toBe("push");
    const { cursor: n1Cursor } = await emitNote(server, "n1");
    const first = await sub.next();
    expect(first.value).toMatchObject({ name: "note.created", data: { id: "n1" } });
    expect(first.value!._meta).toBeUndefined();
    let open = () => {};
    streams.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    cut();
    // The new stream waits at the gate while n2 is emitted: only its cursor can bring n2. A
    // legacy transport first tries to resume the old stream (Last-Event-ID), which has ended.
    await expect.poll(() => streams.params.length, { timeout: 10_000 }).toBe(2);
    await emitNote(server, "n2");
    open();
    const second = await sub.next();
    expect(second.value!.data.id).toBe("n2");
    expect(streams.params[1]!.cursor).toBe(first.value!.cursor);
    expect(first.value!.cursor).not.toBeNull();
    expect(n1Cursor).toBeTypeOf("string");
    cut();
    await expect.poll(() => streams.params.length, { timeout: 10_000 }).toBe(3);
    await emitNote(server, "n3");
    expect((await sub.next()).value!.data.id).toBe("n3");
    sub.close();
    expect(await sub.next()).toEqual({ value: undefined, done: true });
  });

  it("should open a stream again once it stays silent past heartbeatTimeoutMs", async () => {
    const { client, server, streams } = await serve(era, { heartbeatMs: 60_000 });
    const sub = await client.subscribeEvents(
      "note.created",
      {},
      {
        delivery: "push",
        heartbeatTimeoutMs: 200,
        reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
      },
    );
    await expect.poll(() => streams.params.length, { timeout: 5_000 }).toBeGreaterThan(1);
    await emitNote(server, "n1");
    expect((await sub.next()).value!.data.id).toBe("n1");
    sub.close();
  });

  it("should end with the error of terminated when the event type is removed", async () => {
    const { client, server } = await serve(era);
    const registration = server.event({ name: "short.lived" });
    const sub = await client.subscribeEvents("short.lived", {}, { delivery: "push" });
    registration.remove();
    await expect(sub.next()).rejects.toMatchObject({ code: -32023 });
  });

  it("should throw the server's refusal when subscribing: unknown, unsupported, forbidden", async () => {
    const { client } = await serve(era);
    await expect(client.subscribeEvents("no.such")).rejects.toMatchObject({ code: -32023 });
    const pushed = client.subscribeEvents("poll.only", {}, { delivery: "push" });
    await expect(pushed).rejects.toMatchObject({ code: -32026 });
    const forbidden = client.subscribeEvents("guarded", { room: "private" }, { delivery: "poll" });
    await expect(forbidden).rejects.toMatchObject({ code: -32024 });
    // Without a delivery: push where offered, else poll.
    const polled = await client.subscribeEvents("poll.only");
    expect(polled.delivery).toBe("poll");
    polled.close();
  });
});

// SEP-3415 defines list changes on subscriptions/listen, a modern request; our server sends none
// on a legacy session's GET stream.
describe("McpClient events list changes (modern era)", () => {
  it("should hear notifications/events/list_changed through listen, and list the new type", async () => {
    const { client, server } = await serve("modern");
    const changes = client.listen({ eventsListChanged: true });
    expect(await changes.acknowledged).toMatchObject({ eventsListChanged: true });
    server.event({ name: "late.added" });
    const change = await changes.next();
    expect(change.value).toMatchObject({ method: "notifications/events/list_changed" });
    expect((await client.events()).map((event) => event.name)).toContain("late.added");
    changes.close();
  });
});
