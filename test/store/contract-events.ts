import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/protocol/messages.js";
import {
  compareSeq,
  type DeliveryJob,
  type McpStore,
  type WebhookRecord,
} from "../../src/store/types.js";

/** The stores of the running test: two processes sharing one backend, and a fresh-id maker. */
export interface EventsContractContext {
  store: McpStore;
  peer: McpStore;
  id(label: string): string;
}

const WAIT = { timeout: 10_000, interval: 20 };
const KEEP = { maxLen: 100, maxAgeMs: 60_000 };

function occurrence(n: number): JsonObject {
  return { eventId: `e${n}`, name: "t", timestamp: "2026-12-04T00:00:00Z", data: { n, tags: [] } };
}

function hook(name: string, id: string, overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    id,
    name,
    principal: "https://issuer|alice",
    url: "https://example.com/hook",
    arguments: { labels: [], nested: {} },
    secrets: [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }],
    createdAt: 1,
    expiresAt: null,
    active: true,
    from: "0-0",
    version: 1,
    ...overrides,
  };
}

function job(id: string, overrides: Partial<DeliveryJob> = {}): DeliveryJob {
  return {
    id,
    name: "t",
    subscription: "sub",
    webhookId: `msg_${id}`,
    body: JSON.stringify({ id, data: [] }),
    attempt: 0,
    createdAt: 1,
    ...overrides,
  };
}

/** Appends, expecting a new entry; resolves to its position. */
async function appended(
  store: McpStore,
  feed: string,
  value: JsonObject,
  retain: { maxLen: number; maxAgeMs: number },
  dedupKey?: string,
): Promise<string> {
  const result = await store.feeds!.append(feed, value, retain, dedupKey);
  expect(result.appended).toBe(true);
  return result.seq;
}

/** Claimed jobs without their claim tokens, each checked to be there. */
function unclaimed(jobs: DeliveryJob[]): DeliveryJob[] {
  return jobs.map(({ claim, ...job }) => {
    expect(claim).toEqual(expect.any(String));
    return job;
  });
}

/** The ids of jobs, sorted (claims promise no order among jobs due together). */
const idsOf = (jobs: DeliveryJob[]) => jobs.map((claimed) => claimed.id).sort();

/**
 * The contract of the Events extension's parts of `McpStore` (`feeds`, `webhooks`,
 * `deliveries`), run inside the store contract: `context()` gives the running test's stores.
 */
export function describeEventsStoreContract(context: () => EventsContractContext): void {
  describeFeeds(context);
  describeWebhooks(context);
  describeDeliveries(context);
}

function describeFeeds(context: () => EventsContractContext): void {
  describe("event feeds", () => {
    it("should give increasing positions, and read them in order from any process", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      expect(await store.feeds!.head(feed)).toBe("0-0");
      expect(await peer.feeds!.read(feed, "0-0", 10)).toEqual({
        entries: [],
        head: "0-0",
        truncated: false,
      });
      const seqs: string[] = [];
      for (const n of [1, 2, 3]) seqs.push(await appended(store, feed, occurrence(n), KEEP));
      expect(compareSeq(seqs[0]!, seqs[1]!)).toBeLessThan(0);
      expect(compareSeq(seqs[1]!, seqs[2]!)).toBeLessThan(0);
      const read = await peer.feeds!.read(feed, "0-0", 10);
      expect(read.entries.map((entry) => entry.seq)).toEqual(seqs);
      expect(read.entries.map((entry) => entry.value)).toEqual([1, 2, 3].map(occurrence));
      expect(read.entries.every((entry) => typeof entry.at === "number")).toBe(true);
      expect(read).toMatchObject({ head: seqs[2], truncated: false });
      expect(await peer.feeds!.head(feed)).toBe(seqs[2]);
    });

    it("should read after a position, exclusive, at most limit entries", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      const seqs: string[] = [];
      for (const n of [1, 2, 3, 4]) seqs.push(await appended(store, feed, occurrence(n), KEEP));
      const page = await peer.feeds!.read(feed, seqs[0]!, 2);
      expect(page.entries.map((entry) => entry.value)).toEqual([occurrence(2), occurrence(3)]);
      expect(page.head).toBe(seqs[2]);
      const rest = await peer.feeds!.read(feed, page.head, 2);
      expect(rest.entries.map((entry) => entry.seq)).toEqual([seqs[3]]);
      expect(await peer.feeds!.read(feed, seqs[3]!, 2)).toEqual({
        entries: [],
        head: seqs[3],
        truncated: false,
      });
    });

    it("should keep positions unique and ordered when processes append at once", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      const given = await Promise.all(
        Array.from({ length: 40 }, (_, n) =>
          appended(n % 2 ? store : peer, feed, occurrence(n), KEEP),
        ),
      );
      const read = await store.feeds!.read(feed, "0-0", 100);
      const seqs = read.entries.map((entry) => entry.seq);
      expect(new Set(seqs).size).toBe(40);
      expect([...given].sort(compareSeq)).toEqual(seqs);
      for (let i = 1; i < seqs.length; i++)
        expect(compareSeq(seqs[i - 1]!, seqs[i]!)).toBeLessThan(0);
    });

    it("should trim beyond maxLen, and say truncated only to readers behind the trim", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      const retain = { maxLen: 3, maxAgeMs: 60_000 };
      const seqs: string[] = [];
      for (const n of [1, 2, 3, 4, 5])
        seqs.push(await appended(store, feed, occurrence(n), retain));
      const all = await peer.feeds!.read(feed, "0-0", 10);
      expect(all.entries.map((entry) => entry.seq)).toEqual(seqs.slice(2));
      expect(all.truncated).toBe(true);
      expect((await peer.feeds!.read(feed, seqs[0]!, 10)).truncated).toBe(true);
      // Nothing after the newest trimmed entry was lost.
      const caughtUp = await peer.feeds!.read(feed, seqs[1]!, 10);
      expect(caughtUp).toMatchObject({ head: seqs[4], truncated: false });
      expect(caughtUp.entries).toHaveLength(3);
    });

    it("should trim entries older than maxAgeMs", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      const retain = { maxLen: 1_000, maxAgeMs: 150 };
      const first = await appended(store, feed, occurrence(0), retain);
      // Each poll appends, which trims what has aged out by then.
      let n = 0;
      await expect
        .poll(async () => {
          await peer.feeds!.append(feed, occurrence(++n), retain);
          return (await store.feeds!.read(feed, "0-0", 1)).entries[0]?.seq;
        }, WAIT)
        .not.toBe(first);
      // The first entry, after 0-0, is gone: a gap for a reader from there.
      const read = await store.feeds!.read(feed, "0-0", 1_000);
      expect(read.truncated).toBe(true);
      expect(read.entries.length).toBeGreaterThan(0);
      expect(read.entries.length).toBeLessThanOrEqual(n);
    });

    it("should append a dedup key once within the retention, to the earlier position", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      const key = id("key");
      const first = await appended(store, feed, occurrence(1), KEEP, key);
      expect(await peer.feeds!.append(feed, occurrence(2), KEEP, key)).toEqual({
        seq: first,
        appended: false,
      });
      const other = await appended(peer, feed, occurrence(3), KEEP, id("key"));
      expect(other).not.toBe(first);
      const again = await appended(store, feed, occurrence(4), KEEP, "");
      const read = await store.feeds!.read(feed, "0-0", 10);
      expect(read.entries.map((entry) => entry.seq)).toEqual([first, other, again]);
      // The earlier entry stands as it was: the duplicate's value is not stored.
      expect(read.entries[0]!.value).toEqual(occurrence(1));
    });

    it("should forget a dedup key once the retention has passed", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      const key = id("key");
      const retain = { maxLen: 100, maxAgeMs: 150 };
      const first = await appended(store, feed, occurrence(1), retain, key);
      await expect
        .poll(() => peer.feeds!.append(feed, occurrence(2), retain, key), WAIT)
        .toMatchObject({ appended: true });
      expect(await store.feeds!.head(feed)).not.toBe(first);
    });

    it("should skip entries appended before notBefore", async () => {
      const { store, peer, id } = context();
      const feed = id("feed");
      await store.feeds!.append(feed, occurrence(0), KEEP);
      const [old] = (await store.feeds!.read(feed, "0-0", 1)).entries;
      // Appends until one lands in a later millisecond than the first.
      await expect
        .poll(async () => {
          await peer.feeds!.append(feed, occurrence(1), KEEP);
          return (await peer.feeds!.read(feed, "0-0", 100, old!.at + 1)).entries.length;
        }, WAIT)
        .toBeGreaterThan(0);
      const all = await store.feeds!.read(feed, "0-0", 100);
      const recent = await store.feeds!.read(feed, "0-0", 100, old!.at + 1);
      const expected = all.entries.filter((entry) => entry.at > old!.at);
      expect(recent.entries).toEqual(expected);
      expect(recent.head).toBe(all.head);
      expect((await store.feeds!.read(feed, "0-0", 100, old!.at)).entries[0]).toEqual(old);
      // All too old: nothing returned, and the reader moves on to the head.
      expect(await store.feeds!.read(feed, "0-0", 100, Date.now() + 60_000)).toEqual({
        entries: [],
        head: all.head,
        truncated: false,
      });
    });

    it("should keep feeds apart and refuse a position no feed gives", async () => {
      const { store, id } = context();
      const [one, two] = [id("feed"), id("feed")];
      await store.feeds!.append(one, occurrence(1), KEEP);
      expect(await store.feeds!.head(two)).toBe("0-0");
      expect((await store.feeds!.read(two, "0-0", 10)).entries).toEqual([]);
      await expect(store.feeds!.read(one, "not-a-position", 10)).rejects.toThrow();
    });
  });
}

function describeWebhooks(context: () => EventsContractContext): void {
  describe("webhook subscriptions", () => {
    it("should store a subscription once, then replace it at its version only", async () => {
      const { store, peer, id } = context();
      const [name, sub] = [id("event"), id("sub")];
      expect(await store.webhooks!.get(name, sub)).toBeUndefined();
      const record = hook(name, sub);
      expect(await store.webhooks!.put(record, 0)).toBe(true);
      expect(await peer.webhooks!.put(hook(name, sub, { url: "https://x.test/" }), 0)).toBe(false);
      expect(await peer.webhooks!.get(name, sub)).toEqual(record);
      const next = { ...record, active: false, lastError: "timeout", version: 2 };
      expect(await peer.webhooks!.put(next, 1)).toBe(true);
      expect(await store.webhooks!.put({ ...record, version: 2 }, 1)).toBe(false);
      expect(await store.webhooks!.get(name, sub)).toEqual(next);
    });

    it("should let one of two writes at the same version win", async () => {
      const { store, peer, id } = context();
      const [name, sub] = [id("event"), id("sub")];
      await store.webhooks!.put(hook(name, sub), 0);
      const results = await Promise.all([
        store.webhooks!.put(hook(name, sub, { url: "https://a.test/", version: 2 }), 1),
        peer.webhooks!.put(hook(name, sub, { url: "https://b.test/", version: 2 }), 1),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? "https://a.test/" : "https://b.test/";
      expect((await store.webhooks!.get(name, sub))?.url).toBe(winner);
    });

    it("should list the live subscriptions of an event type", async () => {
      const { store, peer, id } = context();
      const [name, other] = [id("event"), id("event")];
      const [a, b, c] = [id("sub"), id("sub"), id("sub")];
      await store.webhooks!.put(hook(name, a), 0);
      await peer.webhooks!.put(hook(name, b, { expiresAt: Date.now() + 60_000 }), 0);
      await store.webhooks!.put(hook(other, c), 0);
      const listed = await peer.webhooks!.ofEvent(name);
      expect(listed.map((record) => record.id).sort()).toEqual([a, b].sort());
      expect(listed.find((record) => record.id === a)).toEqual(hook(name, a));
      expect((await store.webhooks!.ofEvent(other)).map((record) => record.id)).toEqual([c]);
      expect(await store.webhooks!.ofEvent(id("event"))).toEqual([]);
      expect(await peer.webhooks!.delete(name, a)).toBe(true);
      expect(await store.webhooks!.delete(name, a)).toBe(false);
      expect((await store.webhooks!.ofEvent(name)).map((record) => record.id)).toEqual([b]);
      expect(await store.webhooks!.get(name, a)).toBeUndefined();
    });

    it("should lapse a subscription at its expiresAt, and then take a new one", async () => {
      const { store, peer, id } = context();
      const [name, sub, lasting] = [id("event"), id("sub"), id("sub")];
      // Room for a loaded machine between the put and the first read (no timing is asserted).
      await store.webhooks!.put(hook(name, sub, { expiresAt: Date.now() + 2_000 }), 0);
      await store.webhooks!.put(hook(name, lasting), 0);
      expect(await peer.webhooks!.get(name, sub)).toBeDefined();
      await expect.poll(() => peer.webhooks!.get(name, sub), WAIT).toBeUndefined();
      expect((await peer.webhooks!.ofEvent(name)).map((record) => record.id)).toEqual([lasting]);
      expect(await store.webhooks!.put(hook(name, sub, { version: 2 }), 1)).toBe(false);
      expect(await store.webhooks!.put(hook(name, sub), 0)).toBe(true);
      expect(await peer.webhooks!.get(name, sub)).toEqual(hook(name, sub));
    });

    it("should keep a refreshed subscription past its first expiry", async () => {
      const { store, peer, id } = context();
      const [name, sub, control] = [id("event"), id("sub"), id("sub")];
      const expiresAt = Date.now() + 2_000;
      const record = hook(name, sub, { expiresAt });
      await store.webhooks!.put(record, 0);
      await store.webhooks!.put(hook(name, control, { expiresAt }), 0);
      expect(await peer.webhooks!.put({ ...record, expiresAt: null, version: 2 }, 1)).toBe(true);
      // The control, written with the same expiry and never refreshed, lapses.
      await expect.poll(() => peer.webhooks!.get(name, control), WAIT).toBeUndefined();
      expect((await peer.webhooks!.get(name, sub))?.version).toBe(2);
      expect((await store.webhooks!.ofEvent(name)).map((found) => found.id)).toEqual([sub]);
    });
  });
}

function describeDeliveries(context: () => EventsContractContext): void {
  describe("delivery queue", () => {
    it("should claim due jobs, earliest first, and hide them from other claims", async () => {
      const { store, peer, id } = context();
      const now = Date.now();
      const [early, late, later] = [job(id("job")), job(id("job")), job(id("job"))];
      await store.deliveries!.enqueue([late], now - 1_000);
      await store.deliveries!.enqueue([early], now - 2_000);
      await store.deliveries!.enqueue([later], now + 60_000);
      expect(unclaimed(await peer.deliveries!.claim(1, 60_000))).toEqual([early]);
      expect(unclaimed(await store.deliveries!.claim(10, 60_000))).toEqual([late]);
      expect(await peer.deliveries!.claim(10, 60_000)).toEqual([]);
      expect(await store.deliveries!.claim(0, 60_000)).toEqual([]);
    });

    it("should never give one job to two claims at once", async () => {
      const { store, peer, id } = context();
      const jobs = Array.from({ length: 50 }, () => job(id("job")));
      await store.deliveries!.enqueue(jobs, Date.now() - 1);
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, n) => (n % 2 ? store : peer).deliveries!.claim(7, 60_000)),
      );
      const claimed = claims.flat();
      expect(idsOf(claimed)).toEqual(idsOf(jobs));
    });

    it("should keep a queued job as it is when enqueued again, claimed or not", async () => {
      const { store, peer, id } = context();
      const first = job(id("job"));
      await store.deliveries!.enqueue([first], Date.now() + 60_000);
      await peer.deliveries!.enqueue([{ ...first, body: "changed" }], Date.now() - 1);
      expect(await store.deliveries!.claim(10, 60_000)).toEqual([]);
      const other = job(id("job"));
      await store.deliveries!.enqueue([other], Date.now() - 1);
      expect(unclaimed(await peer.deliveries!.claim(10, 60_000))).toEqual([other]);
      await store.deliveries!.enqueue([other], Date.now() - 1);
      expect(await store.deliveries!.claim(10, 60_000)).toEqual([]);
    });

    it("should give a job again once its claim's lease has run out", async () => {
      const { store, peer, id } = context();
      const abandoned = job(id("job"));
      await store.deliveries!.enqueue([abandoned], Date.now() - 1);
      expect(unclaimed(await store.deliveries!.claim(10, 2_000))).toEqual([abandoned]);
      expect(await peer.deliveries!.claim(10, 60_000)).toEqual([]);
      await expect
        .poll(async () => unclaimed(await peer.deliveries!.claim(10, 60_000)), WAIT)
        .toEqual([abandoned]);
    });

    it("should put a retried job back with its fields, due when asked", async () => {
      const { store, peer, id } = context();
      const failing = job(id("job"));
      await store.deliveries!.enqueue([failing], Date.now() - 1);
      const [claimed] = await store.deliveries!.claim(1, 60_000);
      const later = Date.now() + 30_000;
      await store.deliveries!.retry({ ...claimed!, attempt: 1 }, later);
      expect(await peer.deliveries!.nextDue()).toBe(later);
      expect(await peer.deliveries!.claim(10, 60_000)).toEqual([]);
      await store.deliveries!.retry({ ...claimed!, attempt: 2 }, Date.now() - 1);
      expect(unclaimed(await peer.deliveries!.claim(10, 60_000))).toEqual([
        { ...failing, attempt: 2 },
      ]);
    });

    it("should remove a completed job, and not bring it back by a late retry", async () => {
      const { store, peer, id } = context();
      const done = job(id("job"));
      await store.deliveries!.enqueue([done], Date.now() - 1);
      const [claimed] = await peer.deliveries!.claim(1, 60_000);
      await peer.deliveries!.complete(claimed!.id);
      await peer.deliveries!.complete(claimed!.id);
      expect(await store.deliveries!.nextDue()).toBeUndefined();
      // Its first claimer, whose lease had run out, reports a failure after all.
      await store.deliveries!.retry({ ...claimed!, attempt: 1 }, Date.now() - 1);
      expect(await store.deliveries!.claim(10, 60_000)).toEqual([]);
      expect(await store.deliveries!.nextDue()).toBeUndefined();
    });

    it("should tell the oldest position owed to a subscription until its job is done", async () => {
      const { store, peer, id } = context();
      const [sub, other] = [id("sub"), id("sub")];
      expect(await store.deliveries!.oldestOwed(sub)).toBeUndefined();
      const at = (position: string, subscription = sub) =>
        job(id("job"), { subscription, position });
      // Positions compared as numbers: 999 comes before 1000, and 2-10 after 2-9.
      const [late, early, middle] = [at("1000-0"), at("999-5"), at("1000-10")];
      const unrelated = at("1-0", other);
      const envelope = job(id("job"), { subscription: sub });
      await store.deliveries!.enqueue([late, middle, unrelated, envelope], Date.now() - 1);
      expect(await peer.deliveries!.oldestOwed(sub)).toBe("1000-0");
      await peer.deliveries!.enqueue([early], Date.now() + 60_000);
      expect(await store.deliveries!.oldestOwed(sub)).toBe("999-5");
      expect(await store.deliveries!.oldestOwed(other)).toBe("1-0");
      // Claimed and retried, a job still owes its position; completed, it no longer does.
      const claimed = await store.deliveries!.claim(10, 60_000);
      expect(idsOf(claimed)).toEqual(idsOf([late, middle, unrelated, envelope]));
      await store.deliveries!.retry({ ...late, attempt: 1 }, Date.now() + 60_000);
      await peer.deliveries!.complete(early.id);
      expect(await store.deliveries!.oldestOwed(sub)).toBe("1000-0");
      await store.deliveries!.complete(late.id);
      expect(await peer.deliveries!.oldestOwed(sub)).toBe("1000-10");
      await store.deliveries!.complete(middle.id);
      await store.deliveries!.complete(middle.id);
      expect(await peer.deliveries!.oldestOwed(sub)).toBeUndefined();
      expect(await peer.deliveries!.oldestOwed(other)).toBe("1-0");
      // Enqueued again after its completion, a job owes its position again.
      await peer.deliveries!.enqueue([late], Date.now() + 60_000);
      expect(await store.deliveries!.oldestOwed(sub)).toBe("1000-0");
    });

    it("should complete or retry a job only under its latest claim", async () => {
      const { store, peer, id } = context();
      const contested = job(id("job"));
      await store.deliveries!.enqueue([contested], Date.now() - 1);
      const [first] = await store.deliveries!.claim(1, 300);
      // Its lease runs out; another claim takes it.
      let second: DeliveryJob | undefined;
      await expect
        .poll(async () => {
          [second] = await peer.deliveries!.claim(1, 60_000);
          return second;
        }, WAIT)
        .toBeDefined();
      expect(second!.claim).not.toBe(first!.claim);
      // The first claimer, late, can neither move nor remove it.
      await store.deliveries!.retry({ ...first!, attempt: 5 }, Date.now() - 1);
      await store.deliveries!.complete(first!.id, first!.claim);
      expect(await store.deliveries!.claim(10, 60_000)).toEqual([]);
      expect(await store.deliveries!.nextDue()).toBeGreaterThan(Date.now() + 30_000);
      // The latest claim can.
      await peer.deliveries!.retry({ ...second!, attempt: 1 }, Date.now() - 1);
      const [third] = await store.deliveries!.claim(10, 60_000);
      expect(third).toMatchObject({ id: contested.id, attempt: 1 });
      await store.deliveries!.complete(third!.id, third!.claim);
      expect(await peer.deliveries!.nextDue()).toBeUndefined();
    });

    it("should say when the earliest job is due, a claimed one at its lease's end", async () => {
      const { store, peer, id } = context();
      expect(await store.deliveries!.nextDue()).toBeUndefined();
      const now = Date.now();
      const [a, b] = [job(id("job")), job(id("job"))];
      await store.deliveries!.enqueue([a], now + 60_000);
      expect(await peer.deliveries!.nextDue()).toBe(now + 60_000);
      await peer.deliveries!.enqueue([b], now - 5);
      expect(await store.deliveries!.nextDue()).toBe(now - 5);
      const before = Date.now();
      await store.deliveries!.claim(10, 20_000);
      const due = await peer.deliveries!.nextDue();
      expect(due).toBeGreaterThanOrEqual(before + 20_000);
      expect(due).toBeLessThanOrEqual(now + 60_000);
      await store.deliveries!.complete(b.id);
      expect(await peer.deliveries!.nextDue()).toBe(now + 60_000);
    });
  });
}
