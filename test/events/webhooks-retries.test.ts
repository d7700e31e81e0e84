// Webhook delivery failures (SEP-3415, webhook event delivery): the configured retry schedule
// (short delays here; attempts counted, never timed), suspension after sustained failure (nothing
// queued meanwhile) and reactivation by a refresh (a replay from the frozen watermark), 410 and
// 413 final and never retried, a redirect never followed, the watermark cursor held back while
// deliveries fail, and a worker that keeps looking after a store error.
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/protocol/messages.js";
import { decodeCursor } from "../../src/server/ext/events/cursor.js";
import type { WebhookOptions } from "../../src/server/ext/events/webhooks/options.js";
import { memoryStore } from "../../src/store/memory.js";
import { compareSeq, type DeliveryJob } from "../../src/store/types.js";
import { assertEventsSchema } from "../helpers/events-schema.js";
import { type WebhookHarness, webhookHarness } from "../helpers/webhook-harness.js";
import {
  echoing,
  newSecret,
  startReceiver,
  verifyWith,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A harness and a receiver subscribed to note.created, verified, answering `status` after. */
async function subscribed(status: number, options: WebhookOptions = {}) {
  const receiver = await startReceiver();
  const harness = webhookHarness({
    allow: ["127.0.0.1"],
    retryDelaysMs: [0, 0, 0],
    suspendAfterMs: 0,
    suspendedRecheckMs: 50,
    ...options,
  });
  cleanups.push(
    () => receiver.close(),
    () => harness.close(),
  );
  const secret = newSecret();
  const params = {
    name: "note.created",
    arguments: {},
    delivery: { mode: "webhook", url: receiver.url, secret },
  };
  await harness.call("events/subscribe", params, "alice");
  receiver.respond = (request, index) =>
    request.json.type === "verification" ? echoing(request, index) : { status };
  return { receiver, harness, secret, params };
}

async function drained(harness: WebhookHarness) {
  await expect.poll(() => harness.store.deliveries?.nextDue()).toBeUndefined();
}

/** A refresh's deliveryStatus, checked against the schema. */
async function refresh(harness: WebhookHarness, params: JsonObject) {
  const result = await harness.call("events/subscribe", params, "alice");
  assertEventsSchema("SubscribeEventsResult", result);
  return result.deliveryStatus as JsonObject;
}

const idsOf = (receiver: WebhookReceiver) =>
  receiver.deliveries().map((d) => (d.json.data as JsonObject).id);

describe("failed webhook deliveries", () => {
  it("should retry on the schedule, then give up and suspend until a refresh", async () => {
    const { receiver, harness, secret, params } = await subscribed(500);
    await harness.server.emit("note.created", { id: "n1" }, { eventId: "evt-1" });
    await drained(harness);
    // One attempt and one per delay of retryDelaysMs, each freshly signed.
    expect(idsOf(receiver)).toEqual(["n1", "n1", "n1", "n1"]);
    for (const attempt of receiver.deliveries()) {
      verifyWith(secret, attempt);
      expect(attempt.headers["webhook-id"]).toBe("evt-1");
    }
    // Suspended: a new occurrence is not queued at all (no job claimed again and again).
    await harness.server.emit("note.created", { id: "n2" });
    expect(await harness.store.deliveries?.nextDue()).toBeUndefined();
    const [record] = (await harness.store.webhooks?.ofEvent("note.created")) ?? [];
    expect(record).toMatchObject({ active: false, lastError: "http_5xx" });
    expect(idsOf(receiver)).toHaveLength(4);
    receiver.respond = () => ({ status: 200 });
    const status = await refresh(harness, params);
    expect(status).toMatchObject({ active: false, lastError: "http_5xx" });
    expect(status.failedSince).toEqual(expect.any(String));
    // Reactivated: the feed is replayed from the frozen watermark, so n2 goes out (once).
    await expect.poll(() => idsOf(receiver)).toContain("n2");
    await drained(harness);
    expect(idsOf(receiver).slice(0, 4)).toEqual(["n1", "n1", "n1", "n1"]);
    expect(idsOf(receiver).filter((id) => id === "n2")).toHaveLength(1);
    expect(await refresh(harness, params)).toMatchObject({ active: true, lastError: null });
  });

  it("should never retry a 410 and keep the subscription (the receiver declined that event)", async () => {
    const { receiver, harness, params } = await subscribed(410);
    await harness.server.emit("note.created", { id: "n1" });
    await drained(harness);
    expect(idsOf(receiver)).toEqual(["n1"]);
    receiver.respond = () => ({ status: 200 });
    await harness.server.emit("note.created", { id: "n2" });
    await drained(harness);
    expect(idsOf(receiver)).toEqual(["n1", "n2"]);
    expect(await refresh(harness, params)).toMatchObject({ active: true, lastError: null });
  });

  it("should never retry a 413", async () => {
    const { receiver, harness } = await subscribed(413);
    await harness.server.emit("note.created", { id: "n1" });
    await harness.server.emit("note.created", { id: "n2" });
    await drained(harness);
    expect(idsOf(receiver).sort()).toEqual(["n1", "n2"]);
  });

  it("should not follow a redirect, even to an allowed receiver", async () => {
    const target = await startReceiver();
    cleanups.push(() => target.close());
    const { receiver, harness } = await subscribed(302, { retryDelaysMs: [0] });
    receiver.respond = (request, index) =>
      request.json.type === "verification"
        ? echoing(request, index)
        : { status: 307, headers: { location: target.url } };
    await harness.server.emit("note.created", { id: "n1" });
    await drained(harness);
    expect(idsOf(receiver)).toEqual(["n1", "n1"]);
    expect(target.received).toHaveLength(0);
    const [record] = (await harness.store.webhooks?.ofEvent("note.created")) ?? [];
    expect(record?.lastError).toBe("http_4xx");
  });

  it("should hold the cursor before an event still owed, and move on once it is delivered", async () => {
    const { receiver, harness, params } = await subscribed(200, {
      retryDelaysMs: [3_600_000],
      suspendAfterMs: 3_600_000,
    });
    const queue = harness.store.deliveries!;
    const retried: DeliveryJob[] = [];
    const retry = queue.retry.bind(queue);
    queue.retry = async (job, dueAt) => {
      retried.push(job);
      return retry(job, dueAt);
    };
    receiver.respond = (request, index) =>
      request.json.type === "verification"
        ? echoing(request, index)
        : { status: (request.json.data as JsonObject).id === "A" ? 500 : 200 };
    const a = await harness.server.emit("note.created", { id: "A" });
    // A failed once; its retry waits an hour.
    await expect.poll(() => retried.length).toBe(1);
    const b = await harness.server.emit("note.created", { id: "B" });
    await expect.poll(() => idsOf(receiver)).toEqual(["A", "B"]);
    const positionOf = (cursor: unknown) => decodeCursor("note.created", cursor) ?? "";
    const [aAt, bAt] = [positionOf(a.cursor), positionOf(b.cursor)];
    const cursors = () => receiver.deliveries().map((d) => positionOf(d.json.cursor));
    for (const delivery of receiver.deliveries())
      assertEventsSchema("EventOccurrence", delivery.json);
    // A carried its own position; B, delivered while A is owed, one before A, as a refresh does.
    expect(cursors()[0]).toBe(aAt);
    expect(compareSeq(cursors()[1]!, aAt)).toBeLessThan(0);
    const held = await harness.call("events/subscribe", params, "alice");
    assertEventsSchema("SubscribeEventsResult", held);
    expect(compareSeq(positionOf(held.cursor), aAt)).toBeLessThan(0);
    // A's retry comes due now and succeeds: the watermark passes A and B.
    receiver.respond = echoing;
    await retry(retried[0]!, Date.now());
    const c = await harness.server.emit("note.created", { id: "C" });
    await drained(harness);
    expect(idsOf(receiver).slice(2).sort()).toEqual(["A", "C"]);
    expect(compareSeq(positionOf(c.cursor), bAt)).toBeGreaterThan(0);
    const moved = await harness.call("events/subscribe", params, "alice");
    expect(moved.cursor).toBe(c.cursor);
    const d = await harness.server.emit("note.created", { id: "D" });
    await drained(harness);
    expect(receiver.deliveries().at(-1)!.json.cursor).toBe(d.cursor);
  });
});

describe("a webhook worker whose store fails", () => {
  it("should look at the queue again after a failed look, not wait for the next emit", async () => {
    const receiver = await startReceiver();
    const store = memoryStore();
    const queue = store.deliveries!;
    const nextDue = queue.nextDue.bind(queue);
    const retry = queue.retry.bind(queue);
    let failNext = false;
    // The first look after the failed attempt's retry was queued fails: a store blip.
    queue.retry = async (job, dueAt) => {
      await retry(job, dueAt);
      failNext = true;
    };
    queue.nextDue = async () => {
      if (!failNext) return nextDue();
      failNext = false;
      throw new Error("store blip");
    };
    const harness = webhookHarness({ allow: ["127.0.0.1"], retryDelaysMs: [200] }, store);
    cleanups.push(
      () => receiver.close(),
      () => harness.close(),
    );
    await harness.call(
      "events/subscribe",
      {
        name: "note.created",
        delivery: { mode: "webhook", url: receiver.url, secret: newSecret() },
      },
      "alice",
    );
    receiver.respond = (request, index) =>
      request.json.type === "verification"
        ? echoing(request, index)
        : { status: receiver.deliveries().length === 1 ? 500 : 200 };
    await harness.server.emit("note.created", { id: "n1" });
    // Without a look again, the retry waits for the longest sleep (30 s).
    await expect.poll(() => idsOf(receiver), { timeout: 5_000 }).toEqual(["n1", "n1"]);
    expect(harness.errors).toEqual([new Error("store blip")]);
    harness.errors.length = 0;
  });

  it("should end a drain and close at the drain's deadline while a store call hangs", async () => {
    const store = memoryStore();
    const queue = store.deliveries!;
    const claim = queue.claim.bind(queue);
    let hang = false;
    let release: (() => void) | undefined;
    const hung = new Promise<void>((resolve) => {
      queue.claim = async (limit, leaseMs) => {
        if (!hang) return claim(limit, leaseMs);
        resolve();
        await new Promise<void>((end) => {
          release = end;
        });
        return [];
      };
    });
    const harness = webhookHarness({ allow: ["127.0.0.1"] }, store);
    cleanups.push(async () => release?.());
    hang = true;
    // The first emit loads the webhook module, whose worker looks at the queue at once.
    await harness.server.emit("note.created", { id: "n1" });
    await hung;
    // Without a bound, both wait for the claim for ever (until the test's timeout).
    await harness.extension.whenIdle?.(20);
    await harness.close();
  });
});

describe("a new subscription's replay", () => {
  it("should hold the cursor at its start until the replay is queued", async () => {
    const receiver = await startReceiver();
    const store = memoryStore();
    const harness = webhookHarness({ allow: ["127.0.0.1"] }, store);
    cleanups.push(
      () => receiver.close(),
      () => harness.close(),
    );
    const start = await harness.server.emit("note.created", { id: "start" });
    await harness.server.emit("note.created", { id: "old" });
    const feeds = store.feeds!;
    const read = feeds.read.bind(feeds);
    let live: Promise<{ cursor: string }> | undefined;
    // Once the subscription is stored, before the replay reads the feed: an occurrence emitted
    // and delivered while "old" is not queued yet.
    feeds.read = async (...args) => {
      if ((await store.webhooks!.ofEvent("note.created")).length > 0)
        live ??= harness.server.emit("note.created", { id: "live" }).then(async (emitted) => {
          await expect.poll(() => idsOf(receiver)).toContain("live");
          return emitted;
        });
      await live;
      return read(...args);
    };
    const params = {
      name: "note.created",
      arguments: {},
      delivery: { mode: "webhook", url: receiver.url, secret: newSecret() },
      cursor: start.cursor,
    };
    await harness.call("events/subscribe", params, "alice");
    await drained(harness);
    const cursorOf = (id: string) =>
      receiver.deliveries().find((d) => (d.json.data as JsonObject).id === id)?.json.cursor;
    expect(idsOf(receiver)).toEqual(["live", "old"]);
    for (const delivery of receiver.deliveries())
      assertEventsSchema("EventOccurrence", delivery.json);
    // "live" went out first, while "old" was still to be queued: its cursor stays at the start.
    expect(cursorOf("live")).toBe(start.cursor);
    // Queued and delivered, the replay holds nothing back any more.
    const refreshed = await harness.call("events/subscribe", params, "alice");
    expect(refreshed.cursor).toBe((await live)?.cursor);
    const after = await harness.server.emit("note.created", { id: "after" });
    await drained(harness);
    expect(cursorOf("after")).toBe(after.cursor);
  });
});

describe("an eventId emitted twice", () => {
  it("should deliver the first occurrence once, never the repeat's data", async () => {
    const { receiver, harness } = await subscribed(200);
    const first = await harness.server.emit("note.created", { id: "n1" }, { eventId: "evt-same" });
    await drained(harness);
    // The first was delivered and left the queue: only the feed still knows the id.
    const again = await harness.server.emit("note.created", { id: "n2" }, { eventId: "evt-same" });
    expect(again).toEqual(first);
    await harness.server.emit("note.created", { id: "n3" });
    await drained(harness);
    expect(idsOf(receiver)).toEqual(["n1", "n3"]);
    expect(receiver.deliveries()[0]!.headers["webhook-id"]).toBe("evt-same");
  });
});
