import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { Cluster } from "../test/helpers/cluster.js";
import { positive, positiveIntegers } from "./config.js";
import { measure, type RunResult } from "./load.js";
import { fixed, pairedRatios, ratio } from "./report.js";
import {
  cpuMicrosOf,
  origins,
  RedisCounters,
  type RedisCounts,
  startScaleCluster,
} from "./scale-cluster.js";
import { median } from "./stats.js";
import { legacyWorkload, modernWorkload, type Workload } from "./workload.js";

// Scale-out throughput (`npm run bench:scale`): warm legacy tools/call on three processes sharing
// one Redis, each request sent to the next process in turn by the load generator itself
// (client-side round-robin, so no proxy hop is measured), against one process with the memory
// store; and beside them one process of the three alone, and modern tools/call on the three.
// Redis's INFO commandstats, reset before each timed window, gives its commands per request.

interface Setup {
  id: string;
  label: string;
  origins: string[];
  workload: Workload;
  /** The server processes whose CPU time counts. */
  pids: number[];
  redis?: RedisCounters;
}

interface ScaleResult extends RunResult {
  /** Redis calls per request by command (inside scripts included); empty without Redis. */
  commands: Record<string, number>;
  commandsPerRequest: number;
  readsPerRequest: number;
  redisCpuPerRequest: number;
  /** Each process's share of the setup's server CPU time in the window. */
  cpuShares: number[];
}

interface ScaleSample {
  rep: number;
  concurrency: number;
  server: string;
  result: ScaleResult;
}

const reps = Math.round(positive("BENCH_REPS", 5));
const seconds = positive("BENCH_SECONDS", 2);
const warmupSeconds = positive("BENCH_WARMUP_SECONDS", 1);
const concurrency = positiveIntegers("BENCH_CONCURRENCY", [1, 16, 64]);

const log = (line: string) => process.stderr.write(`${line}\n`);
const rotate = <T>(items: T[], by: number) => items.map((_, i) => items[(i + by) % items.length]!);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Runs one timed window on `setup`, with Redis's counters and each process's CPU around it. */
async function run(setup: Setup, c: number, measureMs: number): Promise<ScaleResult> {
  let cpuBefore: number[] = [];
  let cpuAfter: number[] = [];
  let counts: RedisCounts = { commands: {}, reads: Number.NaN, cpuMicros: Number.NaN };
  const result = await measure(setup.origins, {
    concurrency: c,
    measureMs,
    workload: setup.workload,
    cpuMicros: async () => cpuMicrosOf(setup.pids),
    window: {
      async start() {
        await setup.redis?.reset();
        cpuBefore = setup.pids.map((pid) => cpuMicrosOf([pid]));
      },
      async end() {
        cpuAfter = setup.pids.map((pid) => cpuMicrosOf([pid]));
        if (setup.redis) counts = await setup.redis.read();
      },
    },
  });
  const spent = cpuAfter.map((after, i) => after - cpuBefore[i]!);
  const perRequest = (n: number) => n / result.requests;
  const commands = Object.fromEntries(
    Object.entries(counts.commands).map(([name, calls]) => [name, perRequest(calls)]),
  );
  return {
    ...result,
    commands,
    commandsPerRequest: setup.redis ? perRequest(sum(Object.values(counts.commands))) : 0,
    readsPerRequest: setup.redis ? perRequest(counts.reads) : 0,
    redisCpuPerRequest: setup.redis ? perRequest(counts.cpuMicros) : 0,
    cpuShares: spent.map((micros) => micros / sum(spent)),
  };
}

const clusters: Cluster[] = [];
const counters: RedisCounters[] = [];
const stopAll = async () => {
  for (const redis of counters) redis.close();
  await Promise.all(clusters.map((cluster) => cluster.stop()));
};
process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

try {
  const loadBefore = loadavg();
  const [trio, single] = await Promise.all([
    startScaleCluster(3, "redis"),
    startScaleCluster(1, "memory"),
  ]);
  clusters.push(trio, single);
  const redis = new RedisCounters(trio.redis.url);
  counters.push(redis);
  const trioPids = trio.backends.map((backend) => backend.pid);
  const setups: Setup[] = [
    {
      id: "memory-1",
      label: "1 process, memory store, legacy",
      origins: origins(single),
      workload: legacyWorkload,
      pids: [single.backends[0]!.pid],
    },
    {
      id: "redis-1",
      label: "1 process, Redis, legacy",
      origins: origins(trio).slice(0, 1),
      workload: legacyWorkload,
      pids: trioPids.slice(0, 1),
      redis,
    },
    {
      id: "redis-3",
      label: "3 processes, Redis, legacy",
      origins: origins(trio),
      workload: legacyWorkload,
      pids: trioPids,
      redis,
    },
    {
      id: "redis-3-modern",
      label: "3 processes, Redis, modern",
      origins: origins(trio),
      workload: modernWorkload,
      pids: trioPids,
      redis,
    },
  ];
  log(
    `Redis ${trio.redis.url}; processes ${trioPids.join(", ")} (Redis), ${setups[0]!.pids[0]} (memory)`,
  );
  log(
    `${reps} reps × ${concurrency.join("/")} × ${setups.length} setups × ${seconds} s: about ${Math.ceil(reps * concurrency.length * setups.length * (seconds + 0.5) + setups.length * concurrency.length * (warmupSeconds + 0.5))} s`,
  );
  for (const setup of setups) {
    for (const c of concurrency) await run(setup, c, warmupSeconds * 1000);
  }
  const samples: ScaleSample[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const [index, c] of concurrency.entries()) {
      for (const setup of rotate(setups, rep + index)) {
        const result = await run(setup, c, seconds * 1000);
        samples.push({ rep, concurrency: c, server: setup.id, result });
        log(
          `rep ${rep + 1} c=${c} ${setup.label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${result.commandsPerRequest.toFixed(2)} Redis commands/req`,
        );
      }
    }
  }

  const lines: string[] = [];
  const loadAfter = loadavg();
  lines.push(
    `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}, load ${loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadAfter.map((n) => n.toFixed(2)).join(" ")} after`,
    `medians over ${reps} reps of ${seconds} s; ratios paired within a rep; Redis counts include commands run inside scripts`,
    "",
    "| concurrency | setup | req/s | p50 ms | p99 ms | server CPU µs/req | Redis CPU µs/req | Redis commands/req | Redis socket reads/req | CPU share per process |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  );
  const of = (c: number, id: string) =>
    samples.filter((s) => s.concurrency === c && s.server === id).map((s) => s.result);
  const med = (results: ScaleResult[], pick: (r: ScaleResult) => number) =>
    median(results.map(pick));
  for (const c of concurrency) {
    for (const setup of setups) {
      const results = of(c, setup.id);
      const shares = setup.pids.map((_, i) => med(results, (r) => r.cpuShares[i]!));
      lines.push(
        `| ${c} | ${setup.label} | ${fixed(
          med(results, (r) => r.rps),
          0,
        )} | ${fixed(
          med(results, (r) => r.p50),
          2,
        )} | ${fixed(
          med(results, (r) => r.p99),
          2,
        )} | ${fixed(
          med(results, (r) => r.cpuPerRequest),
          0,
        )} | ${
          setup.redis
            ? fixed(
                med(results, (r) => r.redisCpuPerRequest),
                1,
              )
            : "—"
        } | ${
          setup.redis
            ? fixed(
                med(results, (r) => r.commandsPerRequest),
                2,
              )
            : "—"
        } | ${
          setup.redis
            ? fixed(
                med(results, (r) => r.readsPerRequest),
                2,
              )
            : "—"
        } | ${shares.map((share) => `${(share * 100).toFixed(0)}%`).join(" / ")} |`,
      );
    }
  }
  const comparisons = [
    ["3 × Redis ÷ 1 × memory (legacy)", "redis-3", "memory-1"],
    ["1 × Redis ÷ 1 × memory (legacy)", "redis-1", "memory-1"],
    ["3 × Redis ÷ 1 × Redis (legacy)", "redis-3", "redis-1"],
    ["modern ÷ legacy (3 × Redis)", "redis-3-modern", "redis-3"],
  ] as const;
  for (const [heading, metric] of [
    ["req/s", "rps"],
    ["server CPU/req", "cpuPerRequest"],
  ] as const) {
    lines.push(
      "",
      `| concurrency | ${comparisons.map(([title]) => `${heading} ${title}`).join(" | ")} |`,
      `| ---: |${" ---: |".repeat(comparisons.length)}`,
    );
    for (const c of concurrency) {
      const cells = comparisons.map(([, top, bottom]) =>
        ratio(pairedRatios(samples, c, top, bottom, metric)),
      );
      lines.push(`| ${c} | ${cells.join(" | ")} |`);
    }
  }
  lines.push(
    "",
    "| concurrency | setup | Redis calls per request, by command (medians) |",
    "| ---: | --- | --- |",
  );
  for (const c of concurrency) {
    for (const setup of setups.filter((s) => s.redis)) {
      const results = of(c, setup.id);
      const names = [...new Set(results.flatMap((r) => Object.keys(r.commands)))].sort();
      const cells = names
        .map(
          (name) =>
            `${name} ${fixed(
              med(results, (r) => r.commands[name] ?? 0),
              3,
            )}`,
        )
        .join(", ");
      lines.push(`| ${c} | ${setup.label} | ${cells || "none"} |`);
    }
  }
  console.log(`\n${lines.join("\n")}`);

  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const file = `${resultsDir}scale-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
  writeFileSync(
    file,
    `${JSON.stringify({ reps, seconds, concurrency, loadBefore, loadAfter, setups: setups.map(({ id, label, origins }) => ({ id, label, origins })), samples }, null, 2)}\n`,
  );
  console.log(`\nraw samples: ${file}`);
} finally {
  await stopAll();
}
