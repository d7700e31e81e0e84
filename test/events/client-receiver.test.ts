import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import express from "express";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  createEventsReceiver,
  type DeliveryContext,
  type EventOccurrence,
  type EventsReceiverOptions,
  generateWebhookSecret,
  WebhookSecrets,
} from "../../src/client/ext/events/receiver.js";

const SUBSCRIPTION = "sub_a3f1c8e2b0d49f7e";

const occurrence = (eventId: string): EventOccurrence => ({
  eventId,
  name: "incident.created",
  timestamp: "2026-02-19T16:00:00Z",
  data: { incidentId: "INC-1234", severity: "P1" },
  cursor: "cursor_xyz",
});

interface Delivery {
  body: string;
  webhookId: string;
  /** Secrets whose signatures go in `webhook-signature`, space-delimited (a rotation). */
  signWith: string[];
  at?: Date;
  subscriptionId?: string;
}

/** A delivery as the server makes it, signed by the standardwebhooks package itself. */
function deliveryRequest(delivery: Delivery): Request {
  const at = delivery.at ?? new Date();
  const signature = delivery.signWith
    .map((secret) => new Webhook(secret).sign(delivery.webhookId, at, delivery.body))
    .join(" ");
  return new Request("https://receiver.example/hooks/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": delivery.webhookId,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature,
      "x-mcp-subscription-id": delivery.subscriptionId ?? SUBSCRIPTION,
    },
    body: delivery.body,
  });
}

/** A receiver that knows `secrets` for SUBSCRIPTION, and what it handed on. */
function receiverWith(secrets: string[], options: Partial<EventsReceiverOptions> = {}) {
  const events: [EventOccurrence, DeliveryContext][] = [];
  const controls: unknown[] = [];
  const receiver = createEventsReceiver({
    secrets: (id) => (id === SUBSCRIPTION ? secrets : undefined),
    onEvent: (event, context) => {
      events.push([event, context]);
    },
    onControl: (envelope) => {
      controls.push(envelope);
    },
    ...options,
  });
  return { receiver, events, controls };
}

describe("the events receiver", () => {
  const secret = generateWebhookSecret();

  it("should hand on an occurrence whose signature verifies, and answer 204", async () => {
    const { receiver, events } = receiverWith([secret]);
    const body = JSON.stringify(occurrence("evt_1"));
    const response = await receiver(
      deliveryRequest({ body, webhookId: "evt_1", signWith: [secret] }),
    );
    expect(response.status).toBe(204);
    expect(events).toEqual([
      [occurrence("evt_1"), { subscriptionId: SUBSCRIPTION, webhookId: "evt_1" }],
    ]);
  });

  it("should refuse a bad signature with 401 and hand nothing on", async () => {
    const { receiver, events } = receiverWith([secret]);
    const body = JSON.stringify(occurrence("evt_1"));
    const other = generateWebhookSecret();
    const response = await receiver(
      deliveryRequest({ body, webhookId: "evt_1", signWith: [other] }),
    );
    expect(response.status).toBe(401);
    // A body changed after signing fails too: the HMAC covers the raw bytes.
    const tampered = deliveryRequest({ body, webhookId: "evt_1", signWith: [secret] });
    const changed = new Request(tampered, { body: body.replace("P1", "P2") });
    expect((await receiver(changed)).status).toBe(401);
    expect(events).toEqual([]);
  });

  it("should accept a rotation: either of two signatures, or either of two secrets", async () => {
    const fresh = generateWebhookSecret();
    const body = JSON.stringify(occurrence("evt_2"));
    const onlyNew = receiverWith([fresh]);
    const dual = deliveryRequest({ body, webhookId: "evt_2", signWith: [secret, fresh] });
    expect((await onlyNew.receiver(dual)).status).toBe(204);
    const both = receiverWith([fresh, secret]);
    const oldOnly = deliveryRequest({ body, webhookId: "evt_2", signWith: [secret] });
    expect((await both.receiver(oldOnly)).status).toBe(204);
    expect([onlyNew.events.length, both.events.length]).toEqual([1, 1]);
  });

  it("should refuse a timestamp older than five minutes, or than its own tolerance", async () => {
    const { receiver, events } = receiverWith([secret]);
    const body = JSON.stringify(occurrence("evt_3"));
    const at = new Date(Date.now() - 301_000);
    const response = await receiver(
      deliveryRequest({ body, webhookId: "evt_3", signWith: [secret], at }),
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "webhook-timestamp is too old" });
    const strict = receiverWith([secret], { toleranceSeconds: 30 });
    const minuteOld = new Date(Date.now() - 60_000);
    const late = deliveryRequest({ body, webhookId: "evt_3", signWith: [secret], at: minuteOld });
    expect((await strict.receiver(late)).status).toBe(401);
    expect(events.length + strict.events.length).toBe(0);
    expect(() => receiverWith([secret], { toleranceSeconds: 600 })).toThrow(RangeError);
  });

  it("should acknowledge a repeated webhook-id without handing it on twice", async () => {
    const { receiver, events } = receiverWith([secret]);
    const body = JSON.stringify(occurrence("evt_4"));
    const first = await receiver(deliveryRequest({ body, webhookId: "evt_4", signWith: [secret] }));
    const again = await receiver(deliveryRequest({ body, webhookId: "evt_4", signWith: [secret] }));
    expect([first.status, again.status]).toEqual([204, 204]);
    expect(events.length).toBe(1);
  });

  it("should deliver the same event to two subscriptions of one receiver", async () => {
    const { receiver, events } = receiverWith([], {
      secrets: (id) => (id === "sub_a" || id === "sub_b" ? secret : undefined),
    });
    const body = JSON.stringify(occurrence("evt_5"));
    for (const subscriptionId of ["sub_a", "sub_b"]) {
      const request = deliveryRequest({
        body,
        webhookId: "evt_5",
        signWith: [secret],
        subscriptionId,
      });
      expect((await receiver(request)).status).toBe(204);
    }
    expect(events.map(([, context]) => context.subscriptionId)).toEqual(["sub_a", "sub_b"]);
  });

  it("should echo a verification challenge for a new id with a pending secret, and bind it", async () => {
    const secrets = new WebhookSecrets();
    secrets.add(secret);
    const events: EventOccurrence[] = [];
    const receiver = createEventsReceiver({ secrets, onEvent: (event) => void events.push(event) });
    const body = JSON.stringify({ type: "verification", challenge: "nonce-123" });
    const webhookId = "msg_verification_abc";
    const response = await receiver(deliveryRequest({ body, webhookId, signWith: [secret] }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: "nonce-123" });
    expect(secrets.lookup(SUBSCRIPTION)).toEqual([secret]);
    expect(secrets.pending()).toEqual([]);
    // Bound now, its deliveries are taken; a challenge signed with another secret is not echoed.
    const event = JSON.stringify(occurrence("evt_6"));
    const delivered = await receiver(
      deliveryRequest({ body: event, webhookId: "evt_6", signWith: [secret] }),
    );
    expect(delivered.status).toBe(204);
    const forged = deliveryRequest({
      body,
      webhookId: "msg_verification_def",
      signWith: [generateWebhookSecret()],
      subscriptionId: "sub_other",
    });
    secrets.add(generateWebhookSecret());
    const refused = await receiver(forged);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain("nonce-123");
    expect(events.map((e) => e.eventId)).toEqual(["evt_6"]);
  });

  it("should answer 503 for a delivery to an id it was not told of, so the server retries", async () => {
    const secrets = new WebhookSecrets();
    secrets.add(secret);
    const receiver = createEventsReceiver({ secrets, onEvent: () => {} });
    const body = JSON.stringify(occurrence("evt_7"));
    const response = await receiver(
      deliveryRequest({ body, webhookId: "evt_7", signWith: [secret] }),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
  });

  it("should refuse a body over the ceiling with 413, declared or streamed", async () => {
    const { receiver, events } = receiverWith([secret], { maxBodyBytes: 1024 });
    const big = occurrence("evt_8");
    big.data = { text: "x".repeat(2000) };
    const body = JSON.stringify(big);
    const declared = deliveryRequest({ body, webhookId: "evt_8", signWith: [secret] });
    expect((await receiver(declared)).status).toBe(413);
    const signed = deliveryRequest({ body, webhookId: "evt_8", signWith: [secret] });
    const chunks = new TextEncoder().encode(body);
    const streamed = new Request(signed.url, {
      method: "POST",
      headers: signed.headers,
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < chunks.length; i += 256) controller.enqueue(chunks.slice(i, i + 256));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.headers.get("content-length")).toBeNull();
    expect((await receiver(streamed)).status).toBe(413);
    expect(events).toEqual([]);
  });

  it("should answer 500 when the app's handler throws, and take the retry", async () => {
    let failures = 1;
    const taken: string[] = [];
    const { receiver } = receiverWith([secret], {
      onEvent: (event) => {
        if (failures-- > 0) throw new Error("database down");
        taken.push(event.eventId);
      },
    });
    const body = JSON.stringify(occurrence("evt_9"));
    const failed = await receiver(
      deliveryRequest({ body, webhookId: "evt_9", signWith: [secret] }),
    );
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain("database");
    const retried = await receiver(
      deliveryRequest({ body, webhookId: "evt_9", signWith: [secret] }),
    );
    expect(retried.status).toBe(204);
    expect(taken).toEqual(["evt_9"]);
  });

  it("should refuse malformed bodies and missing headers with 400, other methods with 405", async () => {
    const { receiver, events } = receiverWith([secret]);
    const notJson = await receiver(
      deliveryRequest({ body: "{not json", webhookId: "a", signWith: [secret] }),
    );
    const noData = JSON.stringify({ eventId: "b", name: "x", timestamp: "2026-02-19T16:00:00Z" });
    const partial = await receiver(
      deliveryRequest({ body: noData, webhookId: "b", signWith: [secret] }),
    );
    const unsigned = new Request("https://receiver.example/hooks", { method: "POST", body: "{}" });
    const get = new Request("https://receiver.example/hooks");
    expect([notJson.status, partial.status]).toEqual([400, 400]);
    expect((await receiver(unsigned)).status).toBe(400);
    expect((await receiver(get)).status).toBe(405);
    expect(events).toEqual([]);
  });

  it("should hand gap and terminated envelopes to onControl, and acknowledge unknown types", async () => {
    const { receiver, events, controls } = receiverWith([secret]);
    const gap = { type: "gap", cursor: "fresh_1" };
    const terminated = {
      type: "terminated",
      error: { code: -32024, message: "Forbidden", data: { reason: "Access revoked" } },
    };
    for (const [id, body] of [
      ["msg_gap_1", gap],
      ["msg_terminated_1", terminated],
      ["msg_x_1", { type: "x" }],
    ] as const) {
      const response = await receiver(
        deliveryRequest({ body: JSON.stringify(body), webhookId: id, signWith: [secret] }),
      );
      expect(response.status).toBe(204);
    }
    expect(controls).toEqual([gap, terminated]);
    expect(events).toEqual([]);
  });
});

describe("the events receiver behind Express", () => {
  let close = () => {};
  afterEach(() => close());

  it("should serve through the documented five-line route", async () => {
    const secret = generateWebhookSecret();
    const { receiver, events } = receiverWith([secret]);
    const app = express();
    // The route of docs/events.md: the raw body reaches the receiver unparsed.
    app.post("/hooks/mcp", async (req, res) => {
      const headers = new Headers(req.headers as Record<string, string>);
      const body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
      const request = new Request(`http://localhost${req.url}`, {
        method: "POST",
        headers,
        body,
        duplex: "half",
      } as RequestInit);
      const answer = await receiver(request);
      res
        .status(answer.status)
        .set(Object.fromEntries(answer.headers))
        .send(Buffer.from(await answer.arrayBuffer()));
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    close = () => server.close();
    const { port } = server.address() as AddressInfo;
    const signed = deliveryRequest({
      body: JSON.stringify(occurrence("evt_e")),
      webhookId: "evt_e",
      signWith: [secret],
    });
    const response = await fetch(`http://127.0.0.1:${port}/hooks/mcp`, {
      method: "POST",
      headers: signed.headers,
      body: await signed.text(),
    });
    expect(response.status).toBe(204);
    const challenge = deliveryRequest({
      body: JSON.stringify({ type: "verification", challenge: "c-1" }),
      webhookId: "msg_verification_1",
      signWith: [secret],
    });
    const echoed = await fetch(`http://127.0.0.1:${port}/hooks/mcp`, {
      method: "POST",
      headers: challenge.headers,
      body: await challenge.text(),
    });
    expect(await echoed.json()).toEqual({ challenge: "c-1" });
    expect(events.map(([event]) => event.eventId)).toEqual(["evt_e"]);
  });
});
