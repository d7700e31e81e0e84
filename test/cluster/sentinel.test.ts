import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisSentinels, startRedisSentinels } from "../../examples/shared/redis-sentinel.js";
import { type RunningServer, startConformanceServer } from "../conformance/harness.js";
import { createFleetClient, createHeard, createTally, holdGet } from "../helpers/fleet-client.js";
import { openSession } from "../helpers/legacy.js";
import { viaUrl } from "../helpers/modern.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

// The conformance server on a Sentinel-watched Redis (examples/shared/env.ts: REDIS_SENTINELS),
// serving legacy sessions while `SENTINEL FAILOVER` moves the primary to the replica: every call
// succeeds, or is refused with a retryable 503 first and then succeeds; none hangs; the
// sessions still answer afterwards, and new ones open on the new primary.

failOnUnhandled();

const WAIT_MS = 10_000;

describe("legacy sessions on a Redis watched by Sentinels (conformance server)", () => {
  let redis: RedisSentinels;
  let server: RunningServer;
  beforeAll(async () => {
    redis = await startRedisSentinels();
    server = await startConformanceServer(30_000, {
      REDIS_SENTINELS: redis.spec,
      REDIS_SENTINEL_NAME: redis.name,
      MCP_SECRET: "mcp-mount-sentinel-test",
    });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await redis?.close();
  });

  it("should answer every call across a SENTINEL FAILOVER, retried at most, none hung", {
    timeout: 120_000,
  }, async () => {
    const tally = createTally();
    const client = createFleetClient(server.url, tally);
    const sessions = await Promise.all([0, 1].map(() => openSession(viaUrl(server.url))));
    let running = true;
    let holding = true;
    const heard = createHeard();
    const holder = holdGet(server.url, sessions[0]!, heard, () => holding);
    await expect.poll(() => heard.open, { timeout: WAIT_MS }).toBe(true);
    const workers = sessions.map(async (session) => {
      while (running) await client.legacy(session, "test_simple_text");
    });

    const before = await redis.primary();
    const after = await redis.failover();
    expect(after).not.toBe(before);
    const resumed = tally.succeeded;
    await expect
      .poll(() => tally.succeeded - resumed, { timeout: WAIT_MS })
      .toBeGreaterThanOrEqual(20);
    running = false;
    await Promise.all(workers);

    // The sessions still answer, and a new session is written to the new primary.
    for (const session of sessions)
      expect(await client.legacy(session, "test_simple_text")).toBe(true);
    const fresh = await openSession(viaUrl(server.url));
    expect(await client.legacy(fresh, "test_simple_text")).toBe(true);
    holding = false;
    await holder;

    const { failures, ...counts } = tally;
    console.log("sentinel failover:", JSON.stringify({ ...counts, getReopened: heard.reopened }));
    expect(failures).toEqual([]);
    expect(tally.hung).toBe(0);
    expect(tally.lost).toBe(0);
    expect(tally.reset).toBe(0);
    expect(tally.succeeded).toBe(tally.sent);
  });
});
