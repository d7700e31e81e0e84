// Interop with a published Events implementation, pinned: the AI SDK's MCP package
// (@ai-sdk/mcp 2.0.99), whose webhook receiver (experimental_createMCPEventWebhook) takes the
// subscription our McpClient makes on our server, answers our server's verification challenge
// and accepts its signed deliveries. Its client reads the design sketch's top-level `events`
// capability, not SEP-3415's extension key, so it does not send events/* to us (docs/events.md,
// "Interop"). Sockets on 127.0.0.1, allowed by the operator's allow-list.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import {
  type Experimental_MCPEvent,
  type Experimental_MCPEventStore,
  type Experimental_MCPEventSubscription,
  experimental_createMCPEventWebhook,
} from "@ai-sdk/mcp";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { generateWebhookSecret } from "../../src/client/ext/events/receiver.js";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler } from "../../src/index.js";
import { createEventsServer, tokenAuth } from "../helpers/events-server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/** The AI SDK's subscription store, in memory, as its docs ask an app to provide one. */
function memoryEventStore(): Experimental_MCPEventStore & {
  records: Map<string, Experimental_MCPEventSubscription>;
} {
  const records = new Map<string, Experimental_MCPEventSubscription>();
  return {
    records,
    get: async (key) => records.get(key),
    getById: async (id) => [...records.values()].find((record) => record.id === id),
    set: async (record) => void records.set(record.key, record),
    update: async (key, patch) => {
      const record = records.get(key);
      if (record) records.set(key, { ...record, ...patch });
    },
    delete: async (key) => void records.delete(key),
  };
}

describe.each(["modern", "legacy"] as const)("the AI SDK's webhook receiver (%s era)", (era) => {
  it("should verify and take what our client subscribed and our server delivered", async () => {
    const server = createEventsServer();
    const mcp = createMcpHandler(server, {
      legacy: true,
      auth: tokenAuth(),
      events: { webhooks: { allow: ["127.0.0.1"], retryDelaysMs: [0, 0] } },
    });
    const handle = toNodeHandler(mcp);
    const base = await listen((req, res) => void handle(req, res));
    cleanups.push(() => mcp.close());

    const store = memoryEventStore();
    const received: Experimental_MCPEvent[] = [];
    const webhook = experimental_createMCPEventWebhook({
      store,
      onEvent: async ({ event }) => void received.push(event),
    });
    const hooks = await listen(async (req, res) => {
      const headers = new Headers(req.headers as Record<string, string>);
      const body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
      const init = { method: "POST", headers, body, duplex: "half" } as RequestInit;
      const answer = await webhook(new Request(`http://127.0.0.1${req.url}`, init));
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    });

    const client = await McpClient.connect(`${base}/mcp`, {
      era,
      eraCache: false,
      headers: { authorization: "Bearer alice" },
    });
    cleanups.push(() => client.close());
    const [definition] = (await client.events()).filter((e) => e.name === "note.created");
    // The AI SDK routes by a key in the callback URL, and keeps the secret before subscribing.
    const key = randomUUID();
    const url = `${hooks}/hooks?mcp_event_subscription=${key}`;
    const secret = generateWebhookSecret();
    await store.set({
      key,
      name: "note.created",
      arguments: {},
      definition: { ...definition!, payloadSchema: definition!.payloadSchema ?? {} },
      delivery: { mode: "webhook", url, secret },
      cursor: null,
      truncated: false,
      status: "pending",
    });
    const sub = await client.subscribeEvents(
      "note.created",
      {},
      {
        delivery: "webhook",
        webhook: { url, secret },
      },
    );
    const status = await sub.subscribed;
    await store.update(key, {
      id: status.id,
      refreshBefore: status.refreshBefore,
      status: "active",
    });

    const { eventId } = await server.emit("note.created", { id: "n1", tag: "a" });
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(1);
    expect(received[0]).toMatchObject({ eventId, name: "note.created", data: { id: "n1" } });
    // The receiver kept the delivery's cursor, as the text asks an endpoint to.
    expect(store.records.get(key)!.cursor).toBe(received[0]!.cursor);
    await sub.close();
  });
});
