import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startRedisServer } from "../examples/shared/redis-server.js";
import { type RunningServer, startServer, verifyServer } from "./child.js";
import { positive, positiveIntegers } from "./config.js";
import { measure, type RunResult } from "./load.js";
import { fixed, type PairableSample, pairedRatios, ratio } from "./report.js";
import { median } from "./stats.js";
import { REQUEST_HEADERS, requestBody } from "./request.js";
import { modernWorkload } from "./workload.js";

// What `rateLimit` costs a modern tools/call: the same server without and with a limit, on the
// memory store and on the Redis store (a private redis-server: one round trip per charge). Each
// runs in its own process, the four interleaved rep by rep in rotating order; ratios are paired
// within a rep, each limited mode against its own store without a limit. Then the overshoot of
// the batched mode: three processes on one Redis share one budget, spent until each refuses.

const MODES = [
  { id: "off", label: "memory store, no limit", base: "off" },
  { id: "memory", label: "memory store, rateLimit", base: "off" },
  { id: "redis-off", label: "Redis store, no limit", base: "redis-off" },
  { id: "redis", label: "Redis store, rateLimit", base: "redis-off" },
  { id: "redis-batched", label: "Redis store, rateLimit share 100", base: "redis-off" },
] as const;
type Mode = (typeof MODES)[number]["id"];
/** One timed run, latency included. */
interface Sample extends PairableSample {
  result: RunResult;
}

const reps = Math.round(positive("BENCH_REPS", 5));
const seconds = positive("BENCH_SECONDS", 2);
const warmupSeconds = positive("BENCH_WARMUP_SECONDS", 1);
const concurrencies = positiveIntegers("BENCH_CONCURRENCY", [1, 16, 64]);
const entry = fileURLToPath(new URL("./servers/mcp-mount-ratelimit.ts", import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);
const rotate = <T>(items: readonly T[], by: number) =>
  items.map((_, i) => items[(i + by) % items.length]!);

/**
 * Three batched processes on one budget (one key prefix), called round robin, eight at a time,
 * until each has refused: what they accepted beyond the budget against the slack, 3 × share.
 */
async function overshoot(points: number, share: number): Promise<string> {
  process.env.BENCH_RATE_POINTS = String(points);
  process.env.BENCH_RATE_SHARE = String(share);
  process.env.BENCH_RATE_PREFIX = `bench:overshoot:${Date.now()}:`;
  const servers: RunningServer[] = [];
  try {
    for (let n = 0; n < 3; n++) servers.push(await start("redis-batched", `batched ${n + 1}/3`));
    let accepted = 0;
    let id = 0;
    const refused = new Set<number>();
    while (refused.size < servers.length) {
      const wave = Array.from({ length: 8 }, async (_, i) => {
        const at = (id + i) % servers.length;
        const response = await fetch(`${servers[at]!.origin}/mcp`, {
          method: "POST",
          headers: REQUEST_HEADERS,
          body: requestBody(id + i),
        });
        await response.arrayBuffer();
        if (response.status === 200) accepted++;
        else if (response.status === 429) refused.add(at);
        else throw new Error(`unexpected status ${response.status}`);
      });
      await Promise.all(wave);
      id += 8;
    }
    return `three processes, budget ${points}, share ${share}: ${accepted} accepted, overshoot ${accepted - points} (documented slack 3 × share = ${3 * share})`;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const name of ["BENCH_RATE_POINTS", "BENCH_RATE_SHARE", "BENCH_RATE_PREFIX"])
      delete process.env[name];
  }
}

/** Starts the server in `mode` (its child process inherits the environment as it is now). */
async function start(mode: Mode, label: string): Promise<RunningServer> {
  process.env.BENCH_RATELIMIT = mode;
  const contender = { id: "mcp-mount" as const, label, entry, workload: modernWorkload };
  const server = await startServer(contender);
  await verifyServer(server);
  log(`${label}: pid ${server.pid} on ${server.origin}, tools/call verified`);
  return server;
}

const redis = await startRedisServer();
process.env.REDIS_URL = redis.url;
const running = new Map<Mode, RunningServer>();
const stopAll = async () => {
  await Promise.all([...running.values()].map((server) => server.stop()));
  await redis.close();
};
process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

try {
  for (const { id, label } of MODES) running.set(id, await start(id, label));
  for (const server of running.values())
    for (const concurrency of concurrencies)
      await measure(server.origin, { concurrency, measureMs: warmupSeconds * 1000 });
  const samples: Sample[] = [];
  const loadBefore = loadavg();
  for (let rep = 0; rep < reps; rep++) {
    for (const [index, concurrency] of concurrencies.entries()) {
      for (const { id, label } of rotate(MODES, rep + index)) {
        const server = running.get(id)!;
        const result = await measure(server.origin, {
          concurrency,
          measureMs: seconds * 1000,
          cpuMicros: server.cpuMicros,
        });
        samples.push({ rep, concurrency, server: id, result });
        log(
          `rep ${rep + 1} c=${concurrency} ${label}: ${result.rps.toFixed(0)} req/s, server CPU ${result.cpuPerRequest.toFixed(0)} µs/req`,
        );
      }
    }
  }
  const lines = [
    `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}, load ${loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")} after; medians over ${reps} reps of ${seconds} s, ratios paired within a rep`,
    "",
    "| concurrency | server | req/s | p50 ms | server CPU µs/req | req/s ÷ no limit (min–max) | CPU/req ÷ no limit (min–max) |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const concurrency of concurrencies) {
    for (const { id, label, base } of MODES) {
      const runs = samples.filter((s) => s.concurrency === concurrency && s.server === id);
      const rps = median(runs.map((s) => s.result.rps));
      const p50 = median(runs.map((s) => s.result.p50));
      const cpu = median(runs.map((s) => s.result.cpuPerRequest));
      const vs = id === base ? "1" : ratio(pairedRatios(samples, concurrency, id, base));
      const cpuVs =
        id === base ? "1" : ratio(pairedRatios(samples, concurrency, id, base, "cpuPerRequest"));
      lines.push(
        `| ${concurrency} | ${label} | ${fixed(rps, 0)} | ${fixed(p50, 2)} | ${fixed(cpu, 0)} | ${vs} | ${cpuVs} |`,
      );
    }
  }
  for (const server of running.values()) await server.stop();
  running.clear();
  lines.push("", await overshoot(1_000, 100), await overshoot(300, 10));
  console.log(`\n${lines.join("\n")}`);
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const file = `${resultsDir}bench-ratelimit-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
  writeFileSync(file, `${JSON.stringify({ reps, seconds, concurrencies, samples }, null, 2)}\n`);
  console.log(`\nraw samples: ${file}`);
} finally {
  await stopAll();
}
