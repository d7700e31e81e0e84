import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, type RedisTopology, startCluster } from "../helpers/cluster.js";
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

// Six server processes on one Redis and on a Redis Cluster: a modern listen stream and a legacy
// GET stream held on each process, list changes made on each process in turn. Every stream hears
// every change once: a process delivers each change it receives once to each stream it holds,
// wherever the change was made, and none is lost or doubled by the fleet's size.

failOnUnhandled();

const PROCESSES = 6;
const CHANGES = 10;
/** Pacing of the changes; not a threshold: the test waits for each stream to hear them all. */
const PACE_MS = 300;
const WAIT_MS = 10_000;

describe.each<RedisTopology>(["standalone", "cluster"])(
  "six processes (Redis store, %s)",
  (topology) => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await startCluster({ processes: PROCESSES, topology });
    }, 180_000);
    afterAll(() => cluster?.stop());

    it("should deliver every change made on any process to every stream on every process, once each", {
      timeout: 120_000,
    }, async () => {
      const tally = createTally();
      const on = cluster.backends.map((backend) => createFleetClient(backend.url, tally));
      const sessions = await Promise.all(
        cluster.backends.map((backend) => openSession(viaUrl(backend.url))),
      );
      let holding = true;
      const listens: Heard[] = cluster.backends.map(() => createHeard());
      const gets: Heard[] = cluster.backends.map(() => createHeard());
      // Stream i on process i; session i's GET stream on the process after the one it began on.
      const holders = cluster.backends.flatMap((backend, i) => {
        const next = cluster.backends[(i + 1) % PROCESSES]!;
        return [
          holdListen(backend.url, listens[i]!, () => holding),
          holdGet(next.url, sessions[i]!, gets[i]!, () => holding),
        ];
      });
      const all = [...listens, ...gets];
      try {
        await expect.poll(() => all.every((heard) => heard.open), { timeout: WAIT_MS }).toBe(true);
        for (let change = 0; change < CHANGES; change++) {
          if (change > 0) await new Promise((resolve) => setTimeout(resolve, PACE_MS));
          expect(await on[change % PROCESSES]!.modern("notify_tools_changed")).toBe(true);
        }
        await expect
          .poll(() => all.every((heard) => heard.count >= CHANGES), { timeout: WAIT_MS })
          .toBe(true);
      } finally {
        holding = false;
        await Promise.all(holders);
      }
      expect(tally.failures).toEqual([]);
      expect(listens.map((heard) => heard.count)).toEqual(listens.map(() => CHANGES));
      expect(gets.map((heard) => heard.count)).toEqual(gets.map(() => CHANGES));
      // Each stream stayed open on its own process throughout.
      expect(all.map((heard) => heard.reopened)).toEqual(all.map(() => 0));
    });
  },
);
