// A webhook subscription end to end, both eras: McpClient subscribes on our server with a
// generated secret that our receiver (mcp-mount/events/receiver) holds pending; the server's
// verification challenge is answered by the receiver, signed deliveries reach the app, the
// client refreshes before each grant ends and unsubscribes on close. Sockets on 127.0.0.1,
// allowed by the operator's allow-list.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import {
  createEventsReceiver,
  type DeliveryContext,
  type EventOccurrence,
  WebhookSecrets,
} from "../../src/client/ext/events/receiver.js";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler } from "../../src/index.js";
import { assertEventsSchema } from "../helpers/events-schema.js";
import { createEventsServer, tokenAuth } from "../helpers/events-server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Listens on 127.0.0.1 with `handler`; returns its base URL. */
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/** Our receiver on node:http, through the bridge docs/events.md shows for Express. */
async function startReceiver(secrets: WebhookSecrets) {
  const received: [EventOccurrence, DeliveryContext][] = [];
  const receiver = createEventsReceiver({
    secrets,
    onEvent: (event, context) => {
      received.push([event, context]);
    },
  });
  const base = await listen(async (req, res) => {
    const headers = new Headers(req.headers as Record<string, string>);
    const body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
    const init = { method: "POST", headers, body, duplex: "half" } as RequestInit;
    const answer = await receiver(new Request(`http://localhost${req.url}`, init));
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  return { url: `${base}/hooks/mcp`, received };
}

async function serve(era: "modern" | "legacy") {
  const server = createEventsServer();
  const mcp = createMcpHandler(server, {
    legacy: true,
    auth: tokenAuth(),
    events: { webhooks: { allow: ["127.0.0.1"], minTtlMs: 1_000, retryDelaysMs: [0, 0] } },
  });
  const handle = toNodeHandler(mcp);
  const base = await listen((req, res) => void handle(req, res));
  cleanups.push(() => mcp.close());
  const client = await McpClient.connect(`${base}/mcp`, {
    era,
    eraCache: false,
    headers: { authorization: "Bearer alice" },
  });
  cleanups.push(() => client.close());
  return { server, client };
}

describe.each(["modern", "legacy"] as const)("a webhook subscription (%s era)", (era) => {
  it("should verify, deliver, refresh before the grant ends and unsubscribe on close", async () => {
    const { server, client } = await serve(era);
    const secrets = new WebhookSecrets();
    const receiver = await startReceiver(secrets);
    const cursors: (string | null)[] = [];
    const sub = await client.subscribeEvents(
      "note.created",
      { tag: "a" },
      {
        delivery: "webhook",
        webhook: { url: receiver.url, secrets },
        ttlMs: 1_000,
        onCursor: (cursor) => cursors.push(cursor),
      },
    );
    expect(sub.delivery).toBe("webhook");
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const first = await sub.next();
    const status = first.value!;
    assertEventsSchema("SubscribeEventsResult", { ...status, resultType: "complete" });
    // The challenge came while subscribing, for an id the receiver learnt from it.
    expect(secrets.lookup(status.id)).toEqual([sub.secret]);
    expect(secrets.pending()).toEqual([]);

    await server.emit("note.created", { id: "n1", tag: "b" });
    const { eventId } = await server.emit("note.created", { id: "n2", tag: "a" });
    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
    const [event, context] = receiver.received[0]!;
    expect(event).toMatchObject({ eventId, name: "note.created", data: { id: "n2", tag: "a" } });
    expect(context).toEqual({ subscriptionId: status.id, webhookId: eventId });
    sub.advance(event.cursor ?? null);

    // A grant of about a second is refreshed at three quarters of it, with the same id.
    const refreshed = (await sub.next()).value!;
    expect(refreshed.id).toBe(status.id);
    expect(Date.parse(refreshed.refreshBefore!)).toBeGreaterThan(Date.parse(status.refreshBefore!));
    expect(cursors).toContain(event.cursor);

    await sub.close();
    expect(secrets.lookup(status.id)).toEqual([]);
    const again = client.request("events/unsubscribe", {
      name: "note.created",
      arguments: { tag: "a" },
      delivery: { url: receiver.url },
    });
    await expect(again).rejects.toMatchObject({ code: -32023 });
    expect(await sub.next()).toEqual({ value: undefined, done: true });
  });

  it("should rotate its secret: bound beside the old one, then the only one that verifies", async () => {
    const { server, client } = await serve(era);
    const secrets = new WebhookSecrets();
    const receiver = await startReceiver(secrets);
    const sub = await client.subscribeEvents(
      "note.created",
      {},
      {
        delivery: "webhook",
        webhook: { url: receiver.url, secrets },
      },
    );
    const { id } = await sub.subscribed;
    const old = sub.secret;
    const rotated = await sub.rotateSecret();
    expect(rotated.id).toBe(id);
    expect(sub.secret).not.toBe(old);
    expect(secrets.lookup(id)).toEqual([old, sub.secret]);
    // Without the old secret the receiver verifies only what the server signs with the new one.
    secrets.forget(id, old);
    const { eventId } = await server.emit("note.created", { id: "n1" });
    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
    expect(receiver.received[0]![0].eventId).toBe(eventId);
    await sub.close();
  });

  it("should fail to subscribe when the receiver does not hold the secret", async () => {
    const { client } = await serve(era);
    const receiver = await startReceiver(new WebhookSecrets());
    // Another registry than the receiver's: the challenge cannot verify.
    const elsewhere = new WebhookSecrets();
    const subscribing = client.subscribeEvents(
      "note.created",
      {},
      {
        delivery: "webhook",
        webhook: { url: receiver.url, secrets: elsewhere },
      },
    );
    await expect(subscribing).rejects.toMatchObject({ code: -32027 });
    expect(elsewhere.pending()).toEqual([]);
  });
});
