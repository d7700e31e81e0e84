import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { Pool } from "undici";
import { legacyWorkload } from "../workload.js";
import { closeAll, openAll, openGet, openListen } from "./sse.js";
import type { MemoryMessage } from "./stream-server.js";

// Memory per idle stream for the capacity model, as bench/stream-memory.ts measures it but on
// one Redis-backed process and smaller counts: `count` listen streams, then `count` legacy
// sessions and a GET stream on each (the sessions read first, so the stream's own cost is
// apart), read after forced GCs in the server; Redis's `used_memory` beside it. Warm-up streams
// and sessions are opened and closed before the first round, so code and pools are warm.

/** Growth per stream (or session), in bytes. */
export interface MemoryCost {
  heap: number;
  external: number;
  rss: number;
  /** Growth of Redis's `used_memory`. */
  redis: number;
}

/** One round's costs. */
export interface MemoryRound {
  listen: MemoryCost;
  session: MemoryCost;
  get: MemoryCost;
}

interface Reading extends MemoryMessage {
  redis: number;
}

const SERVER = fileURLToPath(new URL("./stream-server.ts", import.meta.url));

async function startServer(redisUrl: string): Promise<{ port: number; child: ChildProcess }> {
  const child = fork(SERVER, [], {
    execArgv: ["--expose-gc", "--import", "tsx"],
    env: { ...process.env, NODE_ENV: "production", REDIS_URL: redisUrl },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const [ready] = (await once(child, "message")) as [{ port: number }];
  return { port: ready.port, child };
}

const per = (after: Reading, before: Reading, n: number): MemoryCost => ({
  heap: (after.heapUsed - before.heapUsed) / n,
  external: (after.external - before.external) / n,
  rss: (after.rss - before.rss) / n,
  redis: (after.redis - before.redis) / n,
});

/** Measures `rounds` rounds of `count` streams of each kind; `warmup` opened and closed first. */
export async function measureStreamMemory(
  redisUrl: string,
  count: number,
  warmup: number,
  rounds: number,
): Promise<MemoryRound[]> {
  const { port, child } = await startServer(redisUrl);
  const redis = new Redis(redisUrl);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16 });
  const read = async (): Promise<Reading> => {
    const reply = once(child, "message");
    child.send("heap");
    const [memory] = (await reply) as [MemoryMessage];
    const used = /used_memory:(\d+)/.exec(await redis.info("memory"))?.[1];
    return { ...memory, redis: Number(used) };
  };
  const sessions = (n: number) =>
    openAll(n, async () => (await legacyWorkload.open(pool)).headers["mcp-session-id"]!);
  try {
    await closeAll(await openAll(warmup, (i) => openListen(port, i)));
    const warm = await sessions(warmup);
    await closeAll(await openAll(warmup, (i) => openGet(port, warm[i]!)));
    const results: MemoryRound[] = [];
    for (let round = 0; round < rounds; round++) {
      let base = await read();
      const listens = await openAll(count, (i) => openListen(port, i));
      const listen = per(await read(), base, count);
      await closeAll(listens);
      base = await read();
      const ids = await sessions(count);
      const withSessions = await read();
      const gets = await openAll(count, (i) => openGet(port, ids[i]!));
      const get = per(await read(), withSessions, count);
      await closeAll(gets);
      results.push({ listen, session: per(withSessions, base, count), get });
    }
    return results;
  } finally {
    await pool.close();
    redis.disconnect();
    child.disconnect();
  }
}
