// Webhook control envelopes (SEP-3415, non-event webhook bodies) besides verification: a `gap`
// when an occurrence is too large to deliver (over 256 KiB, the delivery profile), and a
// `terminated` (NotFound, kind "event") when the event type is removed; both signed like any
// delivery, with `msg_<type>_…` ids, and checked against the events schema.
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/protocol/messages.js";
import { assertEventsSchema } from "../helpers/events-schema.js";
import { webhookHarness } from "../helpers/webhook-harness.js";
import { newSecret, startReceiver, verifyWith } from "../helpers/webhook-receiver.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const receiver = await startReceiver();
  const harness = webhookHarness({ allow: ["127.0.0.1"], retryDelaysMs: [0] });
  cleanups.push(
    () => receiver.close(),
    () => harness.close(),
  );
  return { receiver, harness };
}

describe("webhook control envelopes", () => {
  it("should send a gap instead of an occurrence over 256 KiB, and go on after it", async () => {
    const { receiver, harness } = await setup();
    const secret = newSecret();
    const delivery = { url: receiver.url, secret };
    await harness.call("events/subscribe", { name: "note.created", delivery }, "alice");
    await harness.server.emit("note.created", { id: "huge", author: "x".repeat(300 * 1024) });
    await harness.server.emit("note.created", { id: "small" });
    await expect.poll(() => receiver.deliveries().length).toBe(2);
    // Each job is delivered on its own: they may arrive in either order.
    const gap = receiver.deliveries().find((d) => d.json.type === "gap");
    const next = receiver.deliveries().find((d) => d.json.type === undefined);
    assertEventsSchema("GapEnvelope", gap!.json);
    expect(gap!.headers["webhook-id"]).toMatch(/^msg_gap_/);
    verifyWith(secret, gap!);
    assertEventsSchema("EventOccurrence", next!.json);
    expect((next!.json.data as JsonObject).id).toBe("small");
  });

  it("should end subscriptions to a removed event type with a signed terminated envelope", async () => {
    const { receiver, harness } = await setup();
    const registration = harness.server.event({ name: "temp.event", delivery: ["webhook"] });
    const secret = newSecret();
    const params = { name: "temp.event", delivery: { url: receiver.url, secret } };
    await harness.call("events/subscribe", params, "alice");
    registration.remove();
    await expect.poll(() => receiver.deliveries().length).toBe(1);
    const [terminated] = receiver.deliveries();
    assertEventsSchema("TerminatedEnvelope", terminated!.json);
    expect(terminated!.json.error).toEqual({
      code: -32023,
      message: "NotFound",
      data: { kind: "event" },
    });
    expect(terminated!.headers["webhook-id"]).toMatch(/^msg_terminated_/);
    verifyWith(secret, terminated!);
    expect(await harness.store.webhooks?.ofEvent("temp.event")).toEqual([]);
  });

  it("should drop a no-expiry subscription suspended for maxTtlMs with a signed terminated envelope", async () => {
    const receiver = await startReceiver();
    const options = { allow: ["127.0.0.1"], noExpiry: true, minTtlMs: 1, maxTtlMs: 50 };
    const harness = webhookHarness({ ...options, retryDelaysMs: [], suspendAfterMs: 0 });
    cleanups.push(
      () => receiver.close(),
      () => harness.close(),
    );
    const secret = newSecret();
    const params = { name: "note.created", ttlMs: null, delivery: { url: receiver.url, secret } };
    const { refreshBefore } = await harness.call("events/subscribe", params, "alice");
    expect(refreshBefore).toBeNull();
    receiver.respond = (request) =>
      request.json.type === "verification"
        ? { status: 200, body: { challenge: request.json.challenge } }
        : { status: request.json.type === "terminated" ? 200 : 503 };
    await harness.server.emit("note.created", { id: "n1" });
    const stored = async () => (await harness.store.webhooks?.ofEvent("note.created")) ?? [];
    // Abandoned at once and suspended: n1 is all it got.
    await expect.poll(async () => (await stored())[0]?.active).toBe(false);
    // Occurrences for it are not queued; one after its failing stretch outlasted maxTtlMs drops it.
    await expect
      .poll(async () => {
        await harness.server.emit("note.created", { id: "later" });
        return stored();
      })
      .toEqual([]);
    await expect.poll(() => receiver.deliveries().length).toBe(2);
    const [first, terminated] = receiver.deliveries();
    expect((first!.json.data as JsonObject).id).toBe("n1");
    assertEventsSchema("TerminatedEnvelope", terminated!.json);
    expect(terminated!.json.error).toEqual({
      code: -32027,
      message: "CallbackEndpointError",
      data: { reason: "http_5xx" },
    });
    verifyWith(secret, terminated!);
  });
});
