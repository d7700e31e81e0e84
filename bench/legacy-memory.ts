import { Redis } from "ioredis";
import { createMcpHandler, type McpHandler, type McpHttpRequest, type McpStore } from "mcp-mount";
import { redisStore } from "mcp-mount/redis";
import { startRedisServer } from "../test/helpers/redis-server.js";
import { positiveIntegers } from "./config.js";
import {
  ECHO_MARK,
  INITIALIZE_BODY,
  INITIALIZE_HEADERS,
  INITIALIZED_BODY,
  LEGACY_HEADERS,
  LEGACY_VERSION,
  legacyRequestBody,
} from "./request.js";
import { createEchoServer } from "./servers/echo-server.js";
import { median } from "./stats.js";

// Heap per idle legacy session in the server process: `npm run bench:memory` with the default
// in-memory store, `npm run bench:memory:redis` (BENCH_STORE=redis) with the Redis store on a
// private redis-server (the records then live in Redis; what stays in the process is measured).
// In one process, each round builds a handler from the built package, runs warm-up sessions
// through every step (initialize, initialized, ping, tools/call, DELETE) so code and caches are
// warm, takes the heap after forced GCs as the baseline, then opens sessions in stages (1,000,
// then up to 10,000) through `mcp.handle()`, leaves them idle and reads the heap again. A sample
// spread over all of them must still answer `ping` afterwards, and an unknown id must not.

const storeKind = process.env.BENCH_STORE || "memory";
if (storeKind !== "memory" && storeKind !== "redis") {
  throw new TypeError("BENCH_STORE must be memory or redis");
}
/** Issue 15's targets: 1 KB with the memory store, 100 B in process with the Redis store. */
const TARGET_BYTES = storeKind === "redis" ? 100 : 1024;

/** Session counts to measure at, cumulative in one handler (BENCH_SESSIONS). */
const stages = positiveIntegers("BENCH_SESSIONS", [1_000, 10_000]).sort((a, b) => a - b);
/** Sessions run through every step and deleted before the baseline (BENCH_WARMUP_SESSIONS). */
const [warmupSessions = 1_000] = positiveIntegers("BENCH_WARMUP_SESSIONS", [1_000]);
/** Fresh handlers measured one after the other (BENCH_ROUNDS). */
const [rounds = 3] = positiveIntegers("BENCH_ROUNDS", [3]);
/** Sessions checked with `ping` after the last reading (BENCH_SAMPLE). */
const [sampleSize = 100] = positiveIntegers("BENCH_SAMPLE", [100]);

/** With BENCH_STORE=redis: a private redis-server and one command connection for every round. */
const redisServer = storeKind === "redis" ? await startRedisServer() : undefined;
const redis = redisServer ? new Redis(redisServer.url) : undefined;

/** A fresh store per round: Redis emptied first, or undefined for the handler's memory default. */
async function freshStore(): Promise<McpStore | undefined> {
  if (!redis) return undefined;
  await redis.flushall();
  return redisStore({ redis });
}

const gc = globalThis.gc;
if (!gc) throw new Error("run with node --expose-gc (npm run bench:memory)");

const HOST = { host: "127.0.0.1:3000" };
const INIT = { ...HOST, ...INITIALIZE_HEADERS };
const SESSION = { ...HOST, ...LEGACY_HEADERS };
const signal = new AbortController().signal;

/** A loopback POST or DELETE as the Node bridge would hand it over. */
function request(method: string, headers: Record<string, string>, body = ""): McpHttpRequest {
  return {
    method,
    url: "http://127.0.0.1:3000/mcp",
    localAddress: "127.0.0.1",
    signal,
    header: (name) => headers[name] ?? null,
    body: async () => ({ kind: "text", text: body }),
  };
}

async function call(mcp: McpHandler, id: string, method: string, body?: string) {
  const response = await mcp.handle(request(method, { ...SESSION, "mcp-session-id": id }, body));
  return { status: response.status, text: typeof response.body === "string" ? response.body : "" };
}

async function openSession(mcp: McpHandler): Promise<string> {
  const init = await mcp.handle(request("POST", INIT, INITIALIZE_BODY));
  const id = init.headers["mcp-session-id"];
  if (init.status !== 200 || id === undefined) throw new Error(`initialize: HTTP ${init.status}`);
  const initialized = await call(mcp, id, "POST", INITIALIZED_BODY);
  if (initialized.status !== 202) throw new Error(`initialized: HTTP ${initialized.status}`);
  return id;
}

const ping = (mcp: McpHandler, id: string) =>
  call(mcp, id, "POST", '{"jsonrpc":"2.0","id":1,"method":"ping"}');

async function warmUp(mcp: McpHandler): Promise<void> {
  const first = await mcp.handle(request("POST", INIT, INITIALIZE_BODY));
  if (typeof first.body !== "string" || !first.body.includes(`"${LEGACY_VERSION}"`)) {
    throw new Error(`initialize did not agree on ${LEGACY_VERSION}: ${String(first.body)}`);
  }
  for (let i = 0; i < warmupSessions; i++) {
    const id = await openSession(mcp);
    const pong = await ping(mcp, id);
    const echo = await call(mcp, id, "POST", legacyRequestBody(i));
    const deleted = await call(mcp, id, "DELETE");
    if (pong.status !== 200 || !echo.text.includes(ECHO_MARK) || deleted.status !== 200) {
      throw new Error(`warm-up session ${i}: ping ${pong.status}, echo ${echo.text}`);
    }
  }
}

/** heapUsed (and external) once repeated full GCs have nothing more to take. */
async function settledHeap(): Promise<{ heap: number; external: number }> {
  for (let i = 0; i < 6; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const { heapUsed, external } = process.memoryUsage();
  return { heap: heapUsed, external };
}

interface Reading {
  sessions: number;
  heapBytes: number;
  externalBytes: number;
  /** Growth of Redis's `used_memory` (the records, their index entries); NaN in memory. */
  redisBytes: number;
}

/** Redis's `used_memory`, or NaN without Redis. */
async function redisMemory(): Promise<number> {
  if (!redis) return Number.NaN;
  return Number(/used_memory:(\d+)/.exec(await redis.info("memory"))?.[1]);
}

async function round(): Promise<{ readings: Reading[]; alive: number; sampled: number }> {
  const mcp = createMcpHandler(createEchoServer("bench-memory"), {
    secret: "bench-secret-0123456789abcdef",
    store: await freshStore(),
  });
  await mcp.ready;
  await warmUp(mcp);
  const last = stages.at(-1)!;
  const every = Math.max(1, Math.floor(last / sampleSize));
  // Allocated before the baseline, so keeping the sample costs the sessions nothing.
  const sample: string[] = new Array(Math.ceil(last / every)).fill("");
  const base = await settledHeap();
  const redisBase = await redisMemory();
  const readings: Reading[] = [];
  let open = 0;
  for (const target of stages) {
    for (; open < target; open++) {
      const id = await openSession(mcp);
      if (open % every === 0) sample[open / every] = id;
    }
    const now = await settledHeap();
    readings.push({
      sessions: open,
      heapBytes: now.heap - base.heap,
      externalBytes: now.external - base.external,
      redisBytes: (await redisMemory()) - redisBase,
    });
  }
  let alive = 0;
  for (const id of sample) if ((await ping(mcp, id)).status === 200) alive++;
  if ((await ping(mcp, "no-such-session")).status !== 404) {
    throw new Error("an unknown session answered ping, so the check proves nothing");
  }
  await mcp.close();
  return { readings, alive, sampled: sample.length };
}

const bytes = (n: number) => Math.round(n).toLocaleString("en-US");

const results = [];
try {
  for (let r = 0; r < rounds; r++) {
    const result = await round();
    results.push(result);
    const perSession = result.readings
      .map((x) => `${bytes(x.heapBytes / x.sessions)} B/session at ${bytes(x.sessions)}`)
      .join(", ");
    process.stderr.write(
      `round ${r + 1}: ${perSession}; ${result.alive}/${result.sampled} sampled sessions answered ping\n`,
    );
  }
} finally {
  redis?.disconnect();
  await redisServer?.close();
}

console.log(
  `\nNode ${process.version}; ${storeKind} store; ${rounds} rounds, each a fresh handler after ${bytes(warmupSessions)} warm-up sessions; medians over the rounds\n`,
);
console.log(
  `| idle sessions | heap used − baseline | heap per session | external per session | target ≤ ${TARGET_BYTES} B | in Redis per session |`,
);
console.log("| ---: | ---: | ---: | ---: | --- | ---: |");
let met = true;
for (const [i, sessions] of stages.entries()) {
  const heap = median(results.map((result) => result.readings[i]!.heapBytes));
  const external = median(results.map((result) => result.readings[i]!.externalBytes));
  const inRedis = median(results.map((result) => result.readings[i]!.redisBytes));
  const perSession = heap / sessions;
  met &&= perSession <= TARGET_BYTES;
  console.log(
    `| ${bytes(sessions)} | ${(heap / 1024 / 1024).toFixed(2)} MiB | ${bytes(perSession)} B | ${bytes(external / sessions)} B | ${perSession <= TARGET_BYTES ? "met" : "MISSED"} | ${redis ? `${bytes(inRedis / sessions)} B` : "—"} |`,
  );
}
for (let i = 1; i < stages.length; i++) {
  const [from, to] = [stages[i - 1]!, stages[i]!];
  const slope = median(
    results.map(
      (result) => (result.readings[i]!.heapBytes - result.readings[i - 1]!.heapBytes) / (to - from),
    ),
  );
  console.log(`\nmarginal heap per session from ${bytes(from)} to ${bytes(to)}: ${bytes(slope)} B`);
}
const alive = results.reduce((sum, result) => sum + result.alive, 0);
const sampled = results.reduce((sum, result) => sum + result.sampled, 0);
console.log(
  `liveness: ${alive}/${sampled} sampled sessions answered ping after the last reading; an unknown id got 404`,
);
console.log(
  `\ntarget (at most ${TARGET_BYTES} bytes of heap per idle session): ${met && alive === sampled ? "MET" : "NOT MET"}`,
);
if (alive !== sampled) process.exitCode = 1;
