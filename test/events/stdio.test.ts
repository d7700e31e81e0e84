// Events over stdio (SEP-3415: push delivers notifications on stdout, notifications/cancelled
// with the request's id stops it), in the modern era and in a legacy session.
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { serveStdio } from "../../src/adapters/stdio.js";
import { memoryStore } from "../../src/store/memory.js";
import { assertEventsEra } from "../helpers/events-schema.js";
import { createEventsServer } from "../helpers/events-server.js";
import { modernMeta } from "../helpers/modern.js";

type Line = Record<string, unknown>;
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stdio server of the events suites on pipes; every line it writes is validated. */
function start(era: "modern" | "legacy") {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = createEventsServer();
  const store = memoryStore();
  const running = serveStdio(server, { input, output, store, events: { heartbeatMs: 100 } });
  cleanups.push(() => running.close());
  const lines: Line[] = [];
  const methods = new Map<unknown, string>();
  let buffer = "";
  output.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
      const line = JSON.parse(buffer.slice(0, at)) as Line;
      buffer = buffer.slice(at + 1);
      assertEventsEra(era, line, methods.get(line.id) ?? "notification");
      lines.push(line);
    }
  });
  let nextId = 1;
  const request = (method: string, params: Record<string, unknown> = {}) => {
    const id = nextId++;
    methods.set(id, method);
    const withMeta = era === "modern" ? { ...params, _meta: modernMeta() } : params;
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: withMeta })}\n`);
    return id;
  };
  const notify = (method: string, params: Record<string, unknown>) =>
    input.write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`);
  const find = (predicate: (line: Line) => boolean) => lines.find(predicate);
  const waitFor = async (predicate: (line: Line) => boolean) => {
    await expect.poll(() => find(predicate), { timeout: 5_000 }).toBeDefined();
    return find(predicate)!;
  };
  const answer = (id: number) => waitFor((line) => line.id === id);
  return { input, server, store, running, lines, request, notify, waitFor, answer };
}

const of = (id: number, method: string) => (line: Line) =>
  line.method === method &&
  ((line.params as Line)._meta as Line | undefined)?.[SUBSCRIPTION] === id;

describe("Events over stdio, modern era", () => {
  it("should list, poll, and push events as notifications tagged with the request's id", async () => {
    const stdio = start("modern");
    const list = await stdio.answer(stdio.request("events/list"));
    expect((list.result as { events: unknown[] }).events).toHaveLength(3);
    const polled = await stdio.answer(stdio.request("events/poll", { name: "note.created" }));
    const stream = stdio.request("events/stream", {
      name: "note.created",
      cursor: (polled.result as Line).cursor,
    });
    await stdio.waitFor(of(stream, "notifications/events/active"));
    await stdio.server.emit("note.created", { id: "1" });
    await stdio.server.emit("note.created", { id: "2" });
    await stdio.waitFor(
      (line) =>
        of(stream, "notifications/events/event")(line) &&
        (line.params as { data: { id: string } }).data.id === "2",
    );
    const events = stdio.lines.filter(of(stream, "notifications/events/event"));
    expect(events.map((line) => (line.params as { data: { id: string } }).data.id)).toEqual([
      "1",
      "2",
    ]);
    const heartbeat = await stdio.waitFor(of(stream, "notifications/events/heartbeat"));
    expect((heartbeat.params as Line).cursor).toBe((events[1]!.params as Line).cursor);
  });

  it("should stop a stream cancelled by notifications/cancelled, with no result", async () => {
    const stdio = start("modern");
    const stream = stdio.request("events/stream", { name: "note.created" });
    await stdio.waitFor(of(stream, "notifications/events/active"));
    stdio.notify("notifications/cancelled", { requestId: stream });
    // Its wake-ups stop: nobody hears the event type's channel any more.
    await expect.poll(() => stdio.store.bus.publish("events:note.created", { s: "0-0" })).toBe(0);
    // A later request is answered, and the cancelled one never is.
    await stdio.answer(stdio.request("events/list"));
    expect(stdio.lines.some((line) => line.id === stream)).toBe(false);
  });

  it("should answer a stream with its result when stdin ends", async () => {
    const stdio = start("modern");
    const stream = stdio.request("events/stream", { name: "note.created" });
    await stdio.waitFor(of(stream, "notifications/events/active"));
    stdio.input.end();
    const result = await stdio.answer(stream);
    expect(result.result).toMatchObject({
      resultType: "complete",
      _meta: { [SUBSCRIPTION]: stream },
    });
    await stdio.running.done;
  });
});

describe("Events over stdio, legacy session", () => {
  it("should declare the extension in initialize, and poll and push in the session", async () => {
    const stdio = start("legacy");
    const init = await stdio.answer(
      stdio.request("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "0" },
      }),
    );
    expect((init.result as Line).capabilities).toMatchObject({
      extensions: { "io.modelcontextprotocol/events": { listChanged: true } },
    });
    stdio.notify("notifications/initialized", {});
    const polled = await stdio.answer(stdio.request("events/poll", { name: "note.created" }));
    const stream = stdio.request("events/stream", { name: "note.created" });
    await stdio.waitFor(of(stream, "notifications/events/active"));
    await stdio.server.emit("note.created", { id: "x" });
    const event = await stdio.waitFor(of(stream, "notifications/events/event"));
    expect(event.params).toMatchObject({ data: { id: "x" } });
    const again = await stdio.answer(
      stdio.request("events/poll", {
        name: "note.created",
        cursor: (polled.result as Line).cursor,
      }),
    );
    expect((again.result as { events: unknown[] }).events).toHaveLength(1);
  });
});
