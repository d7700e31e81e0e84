// Webhook delivery (SEP-3415): events/subscribe and events/unsubscribe, the verification
// handshake, Standard Webhooks signatures checked with the standardwebhooks package itself,
// dual signing during rotation, TTL grants, the per-principal cap, cursor replay. Receivers are
// real sockets on 127.0.0.1, allowed by the operator's allow-list (http: is accepted for
// allow-listed hosts only); every body and result is checked against the events schema.
import { afterEach, describe, expect, it } from "vitest";
import { isMcpError } from "../../src/protocol/errors.js";
import { EventsErrorCode } from "../../src/protocol/events.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import type { WebhookOptions } from "../../src/server/ext/events/webhooks/options.js";
import { memoryStore } from "../../src/store/memory.js";
import { assertEventsSchema } from "../helpers/events-schema.js";
import { principalOf, type WebhookHarness, webhookHarness } from "../helpers/webhook-harness.js";
import {
  newSecret,
  startReceiver,
  verifyWith,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: WebhookOptions = {}) {
  const receiver = await startReceiver();
  const harness = webhookHarness({ allow: ["127.0.0.1"], retryDelaysMs: [0, 0], ...options });
  cleanups.push(
    () => receiver.close(),
    () => harness.close(),
  );
  return { receiver, harness };
}

/** events/subscribe as `subject`, its result checked against the schema. */
async function subscribe(
  harness: WebhookHarness,
  params: JsonObject,
  subject: string | null = "alice",
) {
  const result = await harness.call("events/subscribe", params, subject ?? undefined);
  assertEventsSchema("SubscribeEventsResult", result);
  return result as JsonObject & { id: string; cursor: string; refreshBefore: string | null };
}

/** The error a call rejects with: its code and data. */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isMcpError(error)) throw new Error(`Expected an McpError, got ${String(error)}`);
  assertEventsSchema("EventsErrorObject", error.toJSON());
  return { code: error.code, data: error.data };
}

const noteParams = (receiver: WebhookReceiver, secret: string, extra: JsonObject = {}) => ({
  name: "note.created",
  arguments: {},
  delivery: { mode: "webhook", url: receiver.url, secret },
  ...extra,
});

/** Resolves once the queue holds no delivery: every job delivered or given up. */
async function drained(harness: WebhookHarness) {
  await expect.poll(() => harness.store.deliveries?.nextDue()).toBeUndefined();
}

describe("events/subscribe", () => {
  it("should refuse a caller without a principal with Forbidden", async () => {
    const { receiver, harness } = await setup();
    const error = await refusal(subscribe(harness, noteParams(receiver, newSecret()), null));
    expect(error.code).toBe(EventsErrorCode.Forbidden);
    expect(receiver.received).toHaveLength(0);
  });

  it("should refuse bad requests with the errors the text names, before any POST", async () => {
    const { receiver, harness } = await setup();
    const secret = newSecret();
    const cases: [JsonObject, number][] = [
      [noteParams(receiver, "whsec_c2hvcnQ="), EventsErrorCode.InvalidParams],
      [noteParams(receiver, "not-a-secret"), EventsErrorCode.InvalidParams],
      [
        { ...noteParams(receiver, secret), delivery: { url: "http://example.com/h", secret } },
        EventsErrorCode.InvalidParams,
      ],
      [
        { ...noteParams(receiver, secret), delivery: { url: "not a url", secret } },
        EventsErrorCode.InvalidParams,
      ],
      [{ ...noteParams(receiver, secret), arguments: { nope: 1 } }, EventsErrorCode.InvalidParams],
      [{ ...noteParams(receiver, secret), name: "missing" }, EventsErrorCode.NotFound],
      [{ ...noteParams(receiver, secret), name: "poll.only" }, EventsErrorCode.Unsupported],
      [
        { ...noteParams(receiver, secret), name: "guarded", arguments: { room: "private" } },
        EventsErrorCode.Forbidden,
      ],
    ];
    for (const [params, code] of cases) {
      expect((await refusal(subscribe(harness, params))).code, JSON.stringify(params)).toBe(code);
    }
    expect(receiver.received).toHaveLength(0);
  });

  it("should verify the endpoint with a signed challenge before the first delivery", async () => {
    const { receiver, harness } = await setup();
    const secret = newSecret();
    const result = await subscribe(harness, noteParams(receiver, secret));
    expect(result.id).toMatch(/^sub_/);
    expect(receiver.received).toHaveLength(1);
    const [challenge] = receiver.received;
    assertEventsSchema("VerificationEnvelope", challenge!.json);
    verifyWith(secret, challenge!);
    expect(challenge!.headers["webhook-id"]).toMatch(/^msg_verification_/);
    expect(challenge!.headers["x-mcp-subscription-id"]).toBe(result.id);
    // Same principal and URL, other arguments: verified already.
    await subscribe(harness, noteParams(receiver, newSecret(), { arguments: { tag: "x" } }));
    expect(receiver.received).toHaveLength(1);
    // Another principal is challenged for itself.
    await subscribe(harness, noteParams(receiver, newSecret()), "bob");
    expect(receiver.received).toHaveLength(2);
  });

  it("should fail with CallbackEndpointError when the echo is wrong or the endpoint unreachable", async () => {
    const { receiver, harness } = await setup();
    receiver.respond = () => ({ status: 200, body: { challenge: "something else" } });
    const wrong = await refusal(subscribe(harness, noteParams(receiver, newSecret())));
    expect(wrong).toEqual({
      code: EventsErrorCode.CallbackEndpointError,
      data: { reason: "challenge_failed" },
    });
    receiver.respond = () => ({ status: 500 });
    const failing = await refusal(subscribe(harness, noteParams(receiver, newSecret())));
    expect(failing.data).toEqual({ reason: "challenge_failed" });
    await receiver.close();
    const gone = await refusal(subscribe(harness, noteParams(receiver, newSecret())));
    expect(gone.data).toEqual({ reason: "connection_refused" });
    // Nothing was stored: a later subscribe is challenged again.
    expect(await harness.store.webhooks?.ofEvent("note.created")).toEqual([]);
  });

  it("should grant TTLs within the floor and the cap, and no expiry only when asked and allowed", async () => {
    const { receiver, harness } = await setup({
      minTtlMs: 60_000,
      ttlMs: 120_000,
      maxTtlMs: 600_000,
    });
    const grant = async (ttl: JsonObject) => {
      const before = Date.now();
      const { refreshBefore } = await subscribe(harness, noteParams(receiver, newSecret(), ttl));
      return refreshBefore === null ? null : Date.parse(refreshBefore) - before;
    };
    expect(await grant({ ttlMs: 10 })).toBeGreaterThanOrEqual(59_000);
    expect(await grant({ ttlMs: 10 })).toBeLessThanOrEqual(61_000);
    expect(await grant({})).toBeGreaterThanOrEqual(119_000);
    expect(await grant({ ttlMs: 10_000_000 })).toBeLessThanOrEqual(601_000);
    expect(await grant({ ttlMs: null })).not.toBeNull();
    const open = webhookHarness({ allow: ["127.0.0.1"], noExpiry: true });
    cleanups.push(() => open.close());
    const forever = await subscribe(open, noteParams(receiver, newSecret(), { ttlMs: null }));
    expect(forever.refreshBefore).toBeNull();
  });

  it("should refuse a subscription beyond the principal's cap with ResourceExhausted", async () => {
    const { receiver, harness } = await setup({ maxPerPrincipal: 1 });
    await subscribe(harness, noteParams(receiver, newSecret()));
    // A refresh of the same key is no new subscription.
    await subscribe(harness, noteParams(receiver, newSecret()));
    const error = await refusal(
      subscribe(harness, noteParams(receiver, newSecret(), { arguments: { tag: "b" } })),
    );
    expect(error).toEqual({
      code: EventsErrorCode.ResourceExhausted,
      data: { limit: "subscriptions", max: 1 },
    });
    await subscribe(harness, noteParams(receiver, newSecret()), "bob");
  });
  it("should rate-limit verification POSTs per destination host", async () => {
    const { receiver, harness } = await setup({ verificationsPerMinute: 2 });
    await subscribe(harness, noteParams(receiver, newSecret()), "p1");
    await subscribe(harness, noteParams(receiver, newSecret()), "p2");
    const error = await refusal(subscribe(harness, noteParams(receiver, newSecret()), "p3"));
    expect(error).toEqual({
      code: EventsErrorCode.ResourceExhausted,
      data: { limit: "verifications", max: 2 },
    });
    expect(receiver.received).toHaveLength(2);
    // Verified already: a refresh, or another subscription of p1 to it, needs no slot.
    await subscribe(harness, noteParams(receiver, newSecret(), { arguments: { tag: "t" } }), "p1");
  });
});

describe("webhook deliveries", () => {
  it("should POST each occurrence signed, with the subscription id and a cursor", async () => {
    const { receiver, harness } = await setup();
    const secret = newSecret();
    const { id } = await subscribe(
      harness,
      noteParams(receiver, secret, { arguments: { tag: "a" } }),
    );
    await harness.server.emit("note.created", { id: "n1", tag: "a" }, { eventId: "evt-1" });
    await harness.server.emit("note.created", { id: "n2", tag: "b" });
    await harness.server.emit(
      "note.created",
      { id: "n3", tag: "a" },
      { principal: principalOf("bob") },
    );
    await harness.server.emit(
      "note.created",
      { id: "n4", tag: "a" },
      { principal: principalOf("alice") },
    );
    await expect.poll(() => receiver.deliveries().length).toBe(2);
    await drained(harness);
    // Each delivery is its own job: they may arrive in either order.
    const ids = receiver.deliveries().map((d) => (d.json.data as JsonObject).id);
    expect(ids.sort()).toEqual(["n1", "n4"]);
    for (const delivery of receiver.deliveries()) {
      assertEventsSchema("EventOccurrence", delivery.json);
      verifyWith(secret, delivery);
      expect(delivery.headers["x-mcp-subscription-id"]).toBe(id);
      expect(delivery.headers["webhook-id"]).toBe(delivery.json.eventId);
      expect(delivery.json.cursor).toEqual(expect.any(String));
    }
    expect(receiver.deliveries().map((d) => d.headers["webhook-id"])).toContain("evt-1");
  });

  it("should sign with the old and the new secret during a rotation", async () => {
    const { receiver, harness } = await setup();
    const [first, second] = [newSecret(), newSecret()];
    await subscribe(harness, noteParams(receiver, first));
    const refreshed = await subscribe(harness, noteParams(receiver, second));
    expect(refreshed.deliveryStatus).toMatchObject({ active: true, lastError: null });
    await harness.server.emit("note.created", { id: "n1" });
    await expect.poll(() => receiver.deliveries().length).toBe(1);
    const [delivery] = receiver.deliveries();
    expect(String(delivery!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    verifyWith(first, delivery!);
    verifyWith(second, delivery!);
    expect(() => verifyWith(newSecret(), delivery!)).toThrow();
  });

  it("should replay from a cursor on a new subscription and not before it", async () => {
    const { receiver, harness } = await setup();
    const before = await harness.server.emit("note.created", { id: "old" });
    await harness.server.emit("note.created", { id: "missed" });
    await subscribe(harness, noteParams(receiver, newSecret(), { cursor: before.cursor }));
    await harness.server.emit("note.created", { id: "live" });
    await expect.poll(() => receiver.deliveries().length).toBe(2);
    await drained(harness);
    const ids = receiver.deliveries().map((d) => (d.json.data as JsonObject).id);
    expect(ids.sort()).toEqual(["live", "missed"]);
  });

  it("should deliver an occurrence emitted during a replay once", async () => {
    const receiver = await startReceiver();
    const store = memoryStore();
    const feeds = store.feeds!;
    const read = feeds.read.bind(feeds);
    const harness = webhookHarness({ allow: ["127.0.0.1"] }, store);
    cleanups.push(
      () => receiver.close(),
      () => harness.close(),
    );
    const ids = () => receiver.deliveries().map((d) => (d.json.data as JsonObject).id);
    const before = await harness.server.emit("note.created", { id: "old" });
    await harness.server.emit("note.created", { id: "missed" });
    let during: Promise<unknown> | undefined;
    // Once, as the replay reads (the subscription is stored): an occurrence emitted and
    // delivered before the page is read.
    feeds.read = async (...args) => {
      const stored = await store.webhooks!.ofEvent("note.created");
      if (stored.length > 0)
        during ??= harness.server
          .emit("note.created", { id: "during" })
          .then(() => expect.poll(ids).toContain("during"));
      await during;
      return read(...args);
    };
    await subscribe(harness, noteParams(receiver, newSecret(), { cursor: before.cursor }));
    await drained(harness);
    expect(ids().sort()).toEqual(["during", "missed"]);
    for (const delivery of receiver.deliveries())
      assertEventsSchema("EventOccurrence", delivery.json);
  });

  it("should stop delivering after events/unsubscribe, and answer NotFound for none", async () => {
    const { receiver, harness } = await setup();
    const params = noteParams(receiver, newSecret());
    await subscribe(harness, params);
    const unsubscribe = { name: "note.created", arguments: {}, delivery: { url: receiver.url } };
    const result = await harness.call("events/unsubscribe", unsubscribe, "alice");
    assertEventsSchema("UnsubscribeEventsResult", result);
    await harness.server.emit("note.created", { id: "n1" });
    await drained(harness);
    expect(receiver.deliveries()).toHaveLength(0);
    const again = await refusal(harness.call("events/unsubscribe", unsubscribe, "alice"));
    expect(again).toEqual({ code: EventsErrorCode.NotFound, data: { kind: "subscription" } });
    expect((await refusal(harness.call("events/unsubscribe", unsubscribe))).code).toBe(
      EventsErrorCode.Forbidden,
    );
  });
});
