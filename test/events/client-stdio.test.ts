// McpClient's push subscriptions over stdio, both eras: two streams share one pipe and are told
// apart by _meta["io.modelcontextprotocol/subscriptionId"]; closing one sends
// notifications/cancelled with its request id, and the other goes on.
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { serveStdio } from "../../src/adapters/stdio.js";
import { McpClient, MessageWire } from "../../src/client/index.js";
import type { JsonRpcMessage } from "../../src/protocol/messages.js";
import { memoryStore } from "../../src/store/memory.js";
import { assertEventsEra } from "../helpers/events-schema.js";
import { createEventsServer } from "../helpers/events-server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Line = Record<string, unknown>;

/** Our stdio server on pipes, a client on a MessageWire over them, and what went each way. */
async function connect(era: "modern" | "legacy") {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = createEventsServer();
  const running = serveStdio(server, {
    input,
    output,
    store: memoryStore(),
    events: { heartbeatMs: 1_000 },
  });
  const sent: Line[] = [];
  const methods = new Map<unknown, string>();
  const wire = new MessageWire("stdio", async (message: JsonRpcMessage) => {
    sent.push(message as unknown as Line);
    if ("method" in message && "id" in message) methods.set(message.id, message.method);
    input.write(`${JSON.stringify(message)}\n`);
  });
  let buffer = "";
  output.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
      const line = JSON.parse(buffer.slice(0, at)) as Line;
      buffer = buffer.slice(at + 1);
      const method = typeof line.method === "string" ? line.method : methods.get(line.id);
      if (method?.includes("events/")) assertEventsEra(era, line, method);
      wire.receive(line);
    }
  });
  const client = await McpClient.connect(wire, { era });
  cleanups.push(
    () => running.close(),
    () => client.close(),
  );
  return { server, client, sent };
}

describe.each(["modern", "legacy"] as const)("McpClient push over stdio (%s era)", (era) => {
  it("should route two streams by subscription id and cancel one with notifications/cancelled", async () => {
    const { server, client, sent } = await connect(era);
    const tagA = await client.subscribeEvents("note.created", { tag: "a" }, { delivery: "push" });
    const tagB = await client.subscribeEvents("note.created", { tag: "b" }, { delivery: "push" });
    await server.emit("note.created", { id: "n1", tag: "b" });
    await server.emit("note.created", { id: "n2", tag: "a" });
    expect((await tagA.next()).value!.data.id).toBe("n2");
    expect((await tagB.next()).value!.data.id).toBe("n1");

    const streams = sent.filter((line) => line.method === "events/stream");
    expect(streams).toHaveLength(2);
    tagA.close();
    await expect
      .poll(() => sent.filter((line) => line.method === "notifications/cancelled"))
      .toEqual([
        expect.objectContaining({ params: expect.objectContaining({ requestId: streams[0]!.id }) }),
      ]);
    await server.emit("note.created", { id: "n3", tag: "b" });
    expect((await tagB.next()).value!.data.id).toBe("n3");
    expect(await tagA.next()).toEqual({ value: undefined, done: true });
    tagB.close();
  });
});
