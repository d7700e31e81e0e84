import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisCluster } from "../../examples/shared/redis-cluster.js";
import { type RedisServer, redisCommand } from "../../examples/shared/redis-server.js";
import { type Cluster, startCluster } from "../helpers/cluster.js";
import {
  createFleetClient,
  createHeard,
  createTally,
  type Heard,
  holdGet,
  holdListen,
} from "../helpers/fleet-client.js";
import { openSession } from "../helpers/legacy.js";
import { viaUrl } from "../helpers/modern.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

// Three server processes on a Redis Cluster of three masters, each with a replica, while each
// master in turn crashes (SIGKILL) and its replica takes over: the first is the master of a
// legacy session's slot. Modern and legacy clients call all along, with listen and GET streams
// open. A call may be refused with 503 or a retryable error, and is retried; none may hang,
// none may be lost.
//
// The server processes connect as test/helpers/redis-from-env.ts says (examples/shared/env.ts's
// options). What Redis itself may lose here: replication is asynchronous and nothing is saved
// (no AOF, no WAIT), so the writes a master acknowledged in the instant before its crash that
// its replica had not received are gone: a session touched then keeps its older expiry, a
// session created then is unknown (its client must initialize again), a published list change
// is not delivered. `redisStore({ waitReplicas: 1 })` makes sessions' creations and deletions
// and leases wait for a replica. So the test counts the changes heard during the failovers but
// asserts delivery only once the cluster is whole again.

failOnUnhandled();

/** A generous wait for one event: the machine is shared with other suites. */
const WAIT_MS = 10_000;
/** One slot of each master's range, as redis-cluster.ts shares them among three. */
const RANGE_SLOTS = [0, 5_461, 10_922];

/** The slot of a session's keys (their hash tag is `s:<id>`, see src/store/redis-keys.ts). */
async function slotOfSession(node: RedisServer, session: string): Promise<number> {
  return Number((await redisCommand(node.port, `CLUSTER KEYSLOT s:${session}`)).slice(1));
}

/** The node that is the master of `slot` now. */
async function masterOf(redis: RedisCluster, slot: number): Promise<RedisServer> {
  for (const master of await redis.masters()) {
    const lines = (await redisCommand(master.port, "CLUSTER NODES")).trim().split("\n");
    const self = lines.find((line) => line.includes("myself"))?.split(" ") ?? [];
    const owns = self.slice(8).some((range) => {
      const [from, to = from] = range.split("-").map(Number);
      return from !== undefined && to !== undefined && slot >= from && slot <= to;
    });
    if (owns) return master;
  }
  throw new Error(`no master owns slot ${slot}`);
}

describe("a Redis Cluster master crashing under three processes", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ processes: 3, topology: "cluster" });
  }, 120_000);
  afterAll(() => cluster?.stop());

  it("should lose no call and hang none while each master in turn crashes and its replica takes over", {
    timeout: 240_000,
  }, async () => {
    const redis = cluster.redisCluster!;
    const tally = createTally();
    const client = createFleetClient(cluster.url, tally);
    const sessions = await Promise.all([0, 1, 2].map(() => openSession(viaUrl(cluster.url))));
    const [anyNode] = await redis.masters();
    const slots = await Promise.all(sessions.map((session) => slotOfSession(anyNode!, session)));
    // The first crash takes the master of the first session's slot; then the other two ranges'.
    const first = slots[0]!;
    const rangeOfFirst = RANGE_SLOTS.filter((start) => first >= start).length - 1;
    const targets = [first, ...RANGE_SLOTS.filter((_, range) => range !== rangeOfFirst)];

    let holding = true;
    let running = true;
    const listens: Heard[] = [0, 1].map(() => createHeard());
    const gets: Heard[] = sessions.map(() => createHeard());
    const holders = [
      ...listens.map((heard) => holdListen(cluster.url, heard, () => holding)),
      ...gets.map((heard, i) => holdGet(cluster.url, sessions[i]!, heard, () => holding)),
    ];
    const all = [...listens, ...gets];
    await expect.poll(() => all.every((heard) => heard.open), { timeout: WAIT_MS }).toBe(true);

    let published = 0;
    const workers = [
      ...[0, 1].map(async (worker) => {
        for (let round = 0; running; round++)
          await client.modern("echo", { text: `m${worker}-${round}` });
      }),
      ...sessions.map(async (session, i) => {
        for (let round = 0; running; round++)
          await client.legacy(session, "echo", { text: `l${i}-${round}` });
      }),
      (async () => {
        while (running) {
          if (await client.modern("notify_tools_changed")) published++;
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
      })(),
    ];

    const crashed: { port: number; promoted: number; sentBefore: number }[] = [];
    for (const slot of targets) {
      const master = await masterOf(redis, slot);
      const sentBefore = tally.sent;
      const promoted = await redis.failover(master);
      crashed.push({ port: master.port, promoted: promoted.port, sentBefore });
      // Traffic goes on through the recovered cluster before the next crash.
      const resumed = tally.succeeded;
      await expect
        .poll(() => tally.succeeded - resumed, { timeout: WAIT_MS })
        .toBeGreaterThanOrEqual(10);
    }
    running = false;
    await Promise.all(workers);

    // Every holder hears a change made once the cluster is whole again (reopened if it ended).
    await expect.poll(() => all.every((heard) => heard.open), { timeout: WAIT_MS }).toBe(true);
    const before = all.map((heard) => heard.count);
    expect(await client.modern("notify_tools_changed")).toBe(true);
    published++;
    await expect
      .poll(() => all.every((heard, i) => heard.count > before[i]!), { timeout: WAIT_MS })
      .toBe(true);
    holding = false;
    await Promise.all(holders);

    const { failures, ...counts } = tally;
    console.log(
      "failover:",
      JSON.stringify({
        ...counts,
        published,
        heard: all.map((heard) => heard.count),
        reopened: all.map((heard) => heard.reopened),
        crashed,
      }),
    );
    expect(failures).toEqual([]);
    expect(tally.hung).toBe(0);
    expect(tally.lost).toBe(0);
    expect(tally.reset).toBe(0);
    expect(tally.succeeded).toBe(tally.sent);
    expect(crashed).toHaveLength(3);
  });
});
