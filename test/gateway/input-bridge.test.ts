import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler, memoryStore } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import type { McpStore } from "../../src/store/types.js";
import {
  type BridgeGateway,
  serve,
  startBridgeGateway,
  type UpstreamProbe,
  upstreamProbe,
  upstreamServer,
} from "../helpers/input-bridge-harness.js";
import { accept, callTool, INPUT, onlyInput } from "../helpers/input-bridge-rounds.js";
import { modernHeaders, modernMeta } from "../helpers/modern.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";

let redisServer: RedisServer;
let probe: UpstreamProbe & { gate: Promise<void> };
let upstream: { url: string; close(): Promise<void> };
const cleanups: (() => Promise<void>)[] = [];
const errors: unknown[] = [];

beforeAll(async () => {
  redisServer = await startRedisServer();
  probe = upstreamProbe();
  const mcp = createMcpHandler(upstreamServer(probe), { secret: "upstream", legacy: true });
  upstream = await serve(mcp);
});
afterEach(async () => {
  probe.release();
  // A fresh gate and fresh observations for the next test; the upstream reads them from here.
  Object.assign(probe, upstreamProbe());
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  expect(errors.splice(0)).toEqual([]);
});
afterAll(async () => {
  await upstream?.close();
  await redisServer?.close();
});

/** A store on its own Redis connections, as one gateway process has; all share one prefix. */
async function processStore(prefix: string): Promise<McpStore> {
  const redis = new Redis(redisServer.url);
  if (redis.status !== "ready") await once(redis, "ready");
  const store = redisStore({ redis, prefix });
  cleanups.push(async () => {
    await store.close();
    await redis.quit().catch(() => redis.disconnect());
  });
  return store;
}

/** Gateways on one Redis, each with its store, as separate processes would be. */
async function gateways(
  count: number,
  upstreamEra: "modern" | "legacy",
  inputTimeoutMs?: number,
): Promise<BridgeGateway[]> {
  const prefix = `bridge:${randomUUID()}:`;
  const started: BridgeGateway[] = [];
  for (let i = 0; i < count; i++) {
    const store = await processStore(prefix);
    const gateway = await startBridgeGateway({
      store,
      upstreamUrl: upstream.url,
      upstreamEra,
      errors,
      ...(inputTimeoutMs !== undefined ? { inputTimeoutMs } : {}),
    });
    cleanups.push(() => gateway.close());
    started.push(gateway);
  }
  return started;
}

describe.each(["legacy", "modern"] as const)("Input bridge, %s upstream", (upstreamEra) => {
  it("should answer a modern round on another process than the one holding the upstream call", async () => {
    const [a, b] = await gateways(2, upstreamEra);
    const first = await callTool(a!.url, "confirm", { item: "x" });
    const input = onlyInput(first);
    expect(input).toMatchObject({ method: "elicitation/create", params: { message: "Delete x?" } });
    const retry = await callTool(
      b!.url,
      "confirm",
      { item: "x" },
      {
        previous: first,
        inputResponses: { [input.key]: accept },
      },
    );
    expect(retry.error).toBeUndefined();
    expect(retry.result.structuredContent).toEqual(accept);
  });

  it("should carry one call through rounds on alternating processes, each asking the next input", async () => {
    const [a, b] = await gateways(2, upstreamEra);
    const round1 = await callTool(a!.url, "two_questions", {});
    const first = onlyInput(round1);
    const round2 = await callTool(
      b!.url,
      "two_questions",
      {},
      {
        previous: round1,
        inputResponses: { [first.key]: { action: "accept", content: { v: "one" } } },
      },
    );
    const second = onlyInput(round2);
    expect(second.method).toBe("sampling/createMessage");
    expect(second.key).not.toBe(first.key);
    const sampled = { role: "assistant", content: { type: "text", text: "two" }, model: "m" };
    const round3 = await callTool(
      a!.url,
      "two_questions",
      {},
      {
        previous: round2,
        inputResponses: { [second.key]: sampled },
      },
    );
    expect(round3.result.structuredContent).toEqual({
      first: { v: "one" },
      second: { type: "text", text: "two" },
    });
  });

  it("should fail the retry with a retryable error when the holding process is gone", async () => {
    const [a, b] = await gateways(2, upstreamEra);
    const first = await callTool(a!.url, "confirm", { item: "gone" });
    const input = onlyInput(first);
    await a!.bridge.close();
    const retry = await callTool(
      b!.url,
      "confirm",
      { item: "gone" },
      {
        previous: first,
        inputResponses: { [input.key]: accept },
      },
    );
    expect(retry.error).toMatchObject({ code: -32603, data: { retryable: true } });
    expect(retry.error?.message).toMatch(/upstream call is gone/);
  });

  it("should end a relayed wait with a retryable error when the holder shuts down meanwhile", async () => {
    const [a, b] = await gateways(2, upstreamEra);
    const first = await callTool(a!.url, "slow_confirm", {});
    const input = onlyInput(first);
    const retry = callTool(
      b!.url,
      "slow_confirm",
      {},
      {
        previous: first,
        inputResponses: { [input.key]: accept },
      },
    );
    // The holder handed the answer upstream; the call now works, and the retry waits on B.
    await expect.poll(() => probe.answered.length).toBeGreaterThan(0);
    await a!.bridge.close();
    const error = (await retry).error;
    expect(error).toMatchObject({ code: -32603, data: { retryable: true } });
  });
  it.each(["holder", "other"] as const)(
    "should cancel the upstream call when the client gives up its retry on the %s process",
    async (where) => {
      const [a, b] = await gateways(2, upstreamEra);
      const first = await callTool(a!.url, "slow_confirm", {});
      const input = onlyInput(first);
      const params = {
        name: "slow_confirm",
        arguments: {},
        inputResponses: { [input.key]: accept },
        requestState: first.result.requestState,
        _meta: modernMeta(INPUT),
      };
      const giveUp = new AbortController();
      const retry = fetch((where === "holder" ? a! : b!).url, {
        method: "POST",
        headers: modernHeaders("tools/call", "slow_confirm"),
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }),
        signal: giveUp.signal,
      }).then((response) => response.text());
      await expect.poll(() => probe.answered.length).toBeGreaterThan(0);
      giveUp.abort();
      await expect(retry).rejects.toThrow();
      await expect.poll(() => probe.cancelled).toContain("slow");
    },
  );
});

describe("Input bridge, one process", () => {
  it("should cancel the upstream call when the client does not retry in time", async () => {
    const [gateway] = await gateways(1, "legacy", 200);
    const first = await callTool(gateway!.url, "confirm", { item: "late" });
    const input = onlyInput(first);
    await expect.poll(() => probe.cancelled).toContain("late");
    const retry = await callTool(
      gateway!.url,
      "confirm",
      { item: "late" },
      {
        previous: first,
        inputResponses: { [input.key]: accept },
      },
    );
    expect(retry.error).toMatchObject({ code: -32603, data: { retryable: true } });
  });

  it.each(["legacy", "modern"] as const)(
    "should serve a %s client on a memory store, asking it as its era asks",
    async (era) => {
      const store = memoryStore();
      const gateway = await startBridgeGateway({
        store,
        upstreamUrl: upstream.url,
        upstreamEra: "legacy",
        errors,
      });
      cleanups.push(() => gateway.close());
      const asked: unknown[] = [];
      const client = await McpClient.connect(gateway.url, {
        era,
        eraCache: false,
        onInput: {
          elicitation: (params, context) => {
            asked.push({ message: params.message, key: context.key });
            return accept;
          },
        },
      });
      cleanups.push(() => client.close());
      const result = await client.callTool("confirm", { item: era });
      expect(result.structuredContent).toEqual(accept);
      // A legacy client gets a real server request (no key); a modern one an input round.
      expect(asked).toEqual([
        { message: `Delete ${era}?`, key: era === "legacy" ? undefined : "upstream-1" },
      ]);
    },
  );
});
