import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RedisCluster } from "../../examples/shared/redis-cluster.js";
import { redisCommand } from "../../examples/shared/redis-server.js";
import { type Cluster, startCluster } from "../helpers/cluster.js";
import {
  createFleetClient,
  createHeard,
  createTally,
  type Heard,
  holdGet,
  holdListen,
} from "../helpers/fleet-client.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { viaUrl } from "../helpers/modern.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

// Three server processes on a Redis Cluster of three masters while the slot of a legacy
// session's keys moves from its master to another, the way an operator reshards: the target
// IMPORTING, the source MIGRATING, the keys MIGRATEd, then the slot handed over. Modern and
// legacy clients call all along, a listen and the session's GET stream stay open. Once its keys
// have moved, a command on the source for them is answered ASK (ioredis asks the target), and
// once the slot is handed over, MOVED (ioredis refreshes its slots); a script whose keys are
// split between the two nodes is answered TRYAGAIN and retried. None of that may reach a
// client: a call may be refused with 503 or a retryable error and is retried, none may hang,
// none may be lost, and the session lives on, on every process.

failOnUnhandled();

/** A generous wait for one event: the machine is shared with other suites. */
const WAIT_MS = 10_000;
/** Calls the traffic makes in each phase: a few seconds of it, bounded. */
const CALLS_PER_PHASE = 10;

/** The slot of a session's keys: its record `mcp:{s:<id>}:rec` (src/store/redis-keys.ts). */
async function slotOfSession(port: number, session: string): Promise<number> {
  return Number((await redisCommand(port, `CLUSTER KEYSLOT mcp:{s:${session}}:rec`)).slice(1));
}

/** Redirections and retries the masters answered so far (Redis 7's `errorstat_<reply>`). */
async function redirections(
  redis: RedisCluster,
): Promise<{ ask: number; moved: number; tryAgain: number }> {
  const stats = await Promise.all(
    (await redis.masters()).map((node) => redisCommand(node.port, "INFO errorstats")),
  );
  const sum = (name: string) =>
    stats.reduce((total, text) => {
      const count = new RegExp(`^errorstat_${name}:count=(\\d+)`, "m").exec(text)?.[1];
      return total + Number(count ?? 0);
    }, 0);
  return { ask: sum("ASK"), moved: sum("MOVED"), tryAgain: sum("TRYAGAIN") };
}

describe("a Redis Cluster slot resharded under three processes", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster({ processes: 3, topology: "cluster" });
  }, 120_000);
  afterAll(() => cluster?.stop());

  it("should lose no call and hang none while a legacy session's slot moves to another master", {
    timeout: 120_000,
  }, async () => {
    const redis = cluster.redisCluster!;
    const tally = createTally();
    const client = createFleetClient(cluster.url, tally);
    const [session, other] = await Promise.all([0, 1].map(() => openSession(viaUrl(cluster.url))));
    const [anyNode] = await redis.masters();
    const slot = await slotOfSession(anyNode!.port, session!);
    const source = await redis.masterOf(slot);
    const target = (await redis.masters()).find((node) => node !== source)!;

    let holding = true;
    let running = true;
    const listen = createHeard();
    const get = createHeard();
    const holders = [
      holdListen(cluster.url, listen, () => holding),
      holdGet(cluster.url, session!, get, () => holding),
    ];
    const streams: Heard[] = [listen, get];
    await expect.poll(() => streams.every((heard) => heard.open), { timeout: WAIT_MS }).toBe(true);

    // The migrated session's calls, counted apart to know each phase saw some of them.
    let sessionCalls = 0;
    const workers = [
      (async () => {
        for (let round = 0; running; round++)
          await client.modern("echo", { text: `modern-${round}` });
      })(),
      (async () => {
        for (let round = 0; running; round++)
          if (await client.legacy(session!, "echo", { text: `moved-${round}` })) sessionCalls++;
      })(),
      (async () => {
        for (let round = 0; running; round++)
          await client.legacy(other!, "echo", { text: `other-${round}` });
      })(),
      (async () => {
        // Each change is appended to the GET stream's log, a key of the slot that moves.
        while (running) {
          await client.modern("notify_tools_changed");
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })(),
    ];
    const sessionCallsSoon = async () => {
      const from = sessionCalls;
      await expect
        .poll(() => sessionCalls - from, { timeout: WAIT_MS })
        .toBeGreaterThanOrEqual(CALLS_PER_PHASE);
    };

    await sessionCallsSoon();
    const before = await redirections(redis);
    let whileAsked = before;
    const migrated = await redis.migrateSlot(slot, target, {
      // Between the keys' move and the hand-over, the session's calls go by ASK.
      onKeysMoved: async () => {
        await sessionCallsSoon();
        whileAsked = await redirections(redis);
      },
    });
    expect(await redis.masterOf(slot)).toBe(target);
    // Then by MOVED, until each process has refreshed its slots.
    await sessionCallsSoon();
    const after = await redirections(redis);
    running = false;
    await Promise.all(workers);

    // The session works on every process, each asked directly.
    for (const backend of cluster.backends) {
      const answer = await legacyCall(viaUrl(backend.url), session!, "tools/call", {
        name: "echo",
        arguments: { text: `on ${backend.index}` },
      });
      expect(answer.result.content).toEqual([{ type: "text", text: `on ${backend.index}` }]);
    }
    // Its GET stream, and the listen, hear a change made after the migration.
    await expect.poll(() => streams.every((heard) => heard.open), { timeout: WAIT_MS }).toBe(true);
    const heardBefore = streams.map((heard) => heard.count);
    expect(await client.modern("notify_tools_changed")).toBe(true);
    await expect
      .poll(() => streams.every((heard, i) => heard.count > heardBefore[i]!), { timeout: WAIT_MS })
      .toBe(true);
    holding = false;
    await Promise.all(holders);

    const { failures, ...counts } = tally;
    console.log(
      "resharding:",
      JSON.stringify({
        ...counts,
        sessionCalls,
        slot,
        from: source.port,
        to: target.port,
        keysMigrated: migrated.keys,
        ask: whileAsked.ask - before.ask,
        moved: after.moved - whileAsked.moved,
        tryAgain: after.tryAgain - before.tryAgain,
        heard: streams.map((heard) => heard.count),
        reopened: streams.map((heard) => heard.reopened),
      }),
    );
    expect(migrated.from).toBe(source);
    expect(migrated.keys).toBeGreaterThan(0);
    expect(whileAsked.ask).toBeGreaterThan(before.ask);
    expect(after.moved).toBeGreaterThan(whileAsked.moved);
    expect(failures).toEqual([]);
    expect(tally.hung).toBe(0);
    expect(tally.lost).toBe(0);
    expect(tally.reset).toBe(0);
    expect(tally.succeeded).toBe(tally.sent);
  });
});
