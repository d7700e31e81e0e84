import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import {
  serve,
  startBridgeGateway,
  upstreamProbe,
  upstreamServer,
} from "../helpers/input-bridge-harness.js";
import { accept, callTool, onlyInput } from "../helpers/input-bridge-rounds.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";

const HOLDER = fileURLToPath(new URL("../helpers/input-bridge-process.ts", import.meta.url));
const EXIT_WITH_PARENT = fileURLToPath(new URL("../helpers/exit-with-parent.ts", import.meta.url));

let redisServer: RedisServer;
let upstream: { url: string; close(): Promise<void> };
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redisServer = await startRedisServer();
  const mcp = createMcpHandler(upstreamServer(upstreamProbe()), { secret: "up", legacy: true });
  upstream = await serve(mcp);
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await upstream?.close();
  await redisServer?.close();
});

/** A gateway process of its own on Redis under `prefix`, with its endpoint's URL. */
async function holderProcess(prefix: string) {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--import",
      EXIT_WITH_PARENT,
      HOLDER,
      redisServer.url,
      prefix,
      upstream.url,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
  return { child, url: line.trim() };
}

describe("Input bridge, the holding process killed", () => {
  it("should fail the retry on another process with a retryable error, never a hang", async () => {
    const prefix = `bridge:${randomUUID()}:`;
    const holder = await holderProcess(prefix);
    const redis = new Redis(redisServer.url);
    const store = redisStore({ redis, prefix });
    const errors: unknown[] = [];
    const other = await startBridgeGateway({
      store,
      upstreamUrl: upstream.url,
      upstreamEra: "legacy",
      errors,
    });
    cleanups.push(async () => {
      await other.close();
      await store.close();
      await redis.quit().catch(() => redis.disconnect());
    });
    const first = await callTool(holder.url, "confirm", { item: "k" });
    const input = onlyInput(first);
    const exited = once(holder.child, "exit");
    holder.child.kill("SIGKILL");
    await exited;
    // Its lease outlives it for a while: the missing acknowledgement ends the wait first.
    const retry = await callTool(
      other.url,
      "confirm",
      { item: "k" },
      {
        previous: first,
        inputResponses: { [input.key]: accept },
      },
    );
    expect(retry.error).toMatchObject({ code: -32603, data: { retryable: true } });
    expect(retry.error?.message).toMatch(/does not answer/);
    expect(errors).toEqual([]);
  });
});
