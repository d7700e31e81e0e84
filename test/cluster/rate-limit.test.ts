// One rate-limit budget across three processes on one Redis, behind the round-robin proxy.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, type ClusterServer, servedBy, startCluster } from "../helpers/cluster.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type Send, viaUrl, withBearer } from "../helpers/modern.js";

const BUDGET = 30;
const RATE_LIMIT_SERVER: ClusterServer = {
  script: fileURLToPath(new URL("../helpers/rate-limit-cluster-server.ts", import.meta.url)),
  env: { RATE_POINTS: String(BUDGET) },
  listening: /^listening (\d+)$/m,
};

/** What one request was charged, and how it was answered. */
interface Outcome {
  cost: number;
  status: number;
  backend: number;
}

describe("a rate limit shared by three processes (Redis store, round-robin proxy)", () => {
  let cluster: Cluster;
  let proxy: Send;

  beforeAll(async () => {
    cluster = await startCluster({ server: RATE_LIMIT_SERVER });
    proxy = viaUrl(cluster.url);
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const modern = async (send: Send, tool: string): Promise<Outcome> => {
    const answer = await call(send, "tools/call", { name: tool, arguments: {} });
    return { cost: tool === "expensive" ? 3 : 1, status: answer.status, backend: servedBy(answer) };
  };

  it("should accept exactly the budget from one principal, however its requests are spread", async () => {
    const alice = withBearer(proxy, "alice");
    // Eight at a time, twice the budget: every process charges the same Redis counter.
    const outcomes: Outcome[] = [];
    for (let wave = 0; wave < (2 * BUDGET) / 8; wave++)
      outcomes.push(
        ...(await Promise.all(Array.from({ length: 8 }, () => modern(alice, "cheap")))),
      );
    const accepted = outcomes.filter((outcome) => outcome.status === 200);
    expect(outcomes.every((outcome) => [200, 429].includes(outcome.status))).toBe(true);
    // The slack is nil: Redis counts each charge atomically (INCRBY in one script), so no
    // process can admit what another already spent.
    expect(accepted).toHaveLength(BUDGET);
    expect(new Set(accepted.map((outcome) => outcome.backend))).toEqual(new Set([0, 1, 2]));
    // Another principal is served meanwhile, by any process.
    const bob = withBearer(proxy, "bob");
    for (let n = 0; n < 3; n++) expect((await modern(bob, "cheap")).status).toBe(200);
  });

  it("should hold the budget for costs and both eras at once", async () => {
    const carol = withBearer(proxy, "carol");
    const session = await openSession(carol); // initialize: 1 point
    const legacy = async (tool: string): Promise<Outcome> => {
      const response = await legacyCall(carol, session, "tools/call", {
        name: tool,
        arguments: {},
      });
      return {
        cost: tool === "expensive" ? 3 : 1,
        status: response.status,
        backend: servedBy(response),
      };
    };
    const mixed = await Promise.all(
      ["expensive", "cheap", "expensive", "cheap"].flatMap((tool) => [
        modern(carol, tool),
        legacy(tool),
        modern(carol, tool),
      ]),
    );
    // Then cheap calls until refused: what is left of the budget is spent to the last point.
    const tail: Outcome[] = [];
    while (tail.at(-1)?.status !== 429) tail.push(await modern(carol, "cheap"));
    const outcomes = [...mixed, ...tail];
    const spent = outcomes
      .filter((outcome) => outcome.status === 200)
      .reduce((sum, outcome) => sum + outcome.cost, 1);
    expect(outcomes.every((outcome) => [200, 429].includes(outcome.status))).toBe(true);
    expect(spent).toBe(BUDGET);
  });
});

// Batched: each process spends from a share of the budget and settles with Redis in batches.
// Windows are aligned to the clock, so a day-long one: the test never straddles one's end.
const SHARE = 4;
describe.each(["standalone", "cluster"] as const)(
  "a batched rate limit shared by three processes, Redis %s",
  (topology) => {
    let cluster: Cluster;
    let proxy: Send;

    beforeAll(async () => {
      cluster = await startCluster({
        server: {
          ...RATE_LIMIT_SERVER,
          env: {
            RATE_POINTS: String(BUDGET),
            RATE_SHARE: String(SHARE),
            RATE_WINDOW_MS: "86400000",
          },
        },
        topology,
      });
      proxy = viaUrl(cluster.url);
    }, 120_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it("should hold one budget within the documented slack: at most 3 × share over it", async () => {
      const dan = withBearer(proxy, "dan");
      const outcomes: Outcome[] = [];
      // Eight at a time until every process has refused: each knows the budget is spent.
      while (new Set(outcomes.filter((o) => o.status === 429).map((o) => o.backend)).size < 3) {
        const wave = Array.from({ length: 8 }, async () => {
          const answer = await call(dan, "tools/call", { name: "cheap", arguments: {} });
          return { cost: 1, status: answer.status, backend: servedBy(answer) };
        });
        outcomes.push(...(await Promise.all(wave)));
      }
      expect(outcomes.every((outcome) => [200, 429].includes(outcome.status))).toBe(true);
      const accepted = outcomes.filter((outcome) => outcome.status === 200).length;
      const overshoot = accepted - BUDGET;
      console.log(
        `batched, ${topology}: ${accepted} accepted of a ${BUDGET} budget, overshoot ${overshoot} (slack ${3 * SHARE})`,
      );
      expect(accepted).toBeGreaterThanOrEqual(BUDGET);
      expect(overshoot).toBeLessThanOrEqual(3 * SHARE);
    });
  },
);
