import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { Cluster } from "../test/helpers/cluster.js";
import { measureChanges } from "./capacity/changes.js";
import { formatCapacity } from "./capacity/report.js";
import { measureRequests, type RequestSetup, wireBytes } from "./capacity/requests.js";
import type { CapacityRun, Era, RequestRecord } from "./capacity/run.js";
import { measureStreamMemory } from "./capacity/streams.js";
import { positive, positiveIntegers } from "./config.js";
import { origins, RedisCounters, startScaleCluster } from "./scale-cluster.js";
import { legacyWorkload, modernWorkload } from "./workload.js";

// The capacity model (`npm run bench:capacity`, issue 36): unit costs measured on one
// Redis-backed process (per request: server, load generator and Redis CPU, Redis calls, bytes;
// per idle stream: heap, RSS and Redis memory; per list change: server and Redis CPU per stream
// that hears it), turned into what N processes and one Redis node or a Cluster carry, and
// checked against BENCH_PROCESSES (6) processes on the same Redis under the same load generator
// with client-side round-robin, as bench/scale.ts runs them. On this machine the servers, Redis
// and the generator share the cores, so the check's prediction is cores × 1e6 ÷ (server +
// generator + Redis µs per request), one process's costs of the same rep.

const reps = Math.round(positive("BENCH_REPS", 5));
const seconds = positive("BENCH_SECONDS", 2);
/** Unrecorded load on each process, per traffic, before the first rep. */
const warmupSeconds = positive("BENCH_WARMUP_SECONDS", 2);
const concurrency = positiveIntegers("BENCH_CONCURRENCY", [16, 64]);
const [processes = 6] = positiveIntegers("BENCH_PROCESSES", [6]);
const [memoryStreams = 1_000] = positiveIntegers("BENCH_STREAMS", [1_000]);
const [memoryRounds = 3] = positiveIntegers("BENCH_ROUNDS", [3]);
const [changeStreams = 600] = positiveIntegers("BENCH_CHANGE_STREAMS", [600]);
const [changesPerBatch = 20] = positiveIntegers("BENCH_CHANGES", [20]);
/** Memory an app process may spend on idle streams, and Redis on their records (MiB). */
const processBudget = positive("BENCH_RSS_BUDGET_MIB", 1024) * 2 ** 20;
const redisBudget = positive("BENCH_REDIS_BUDGET_MIB", 1024) * 2 ** 20;
/** The app hosts' network, each way (Gbit/s). */
const link = (positive("BENCH_LINK_GBPS", 10) * 1e9) / 8;

const log = (line: string) => process.stderr.write(`${line}\n`);
const rotate = <T>(items: T[], by: number) => items.map((_, i) => items[(i + by) % items.length]!);

interface Setup extends RequestSetup {
  era: Era;
  processes: number;
}

let cluster: Cluster | undefined;
let redis: RedisCounters | undefined;
const stop = async () => {
  redis?.close();
  await cluster?.stop();
};
process.once("SIGINT", () => void stop().then(() => process.exit(130)));

/** Unrecorded load on each of `all` alone, per traffic, then the timed windows in rotation. */
async function requestPhase(setups: Setup[], all: string[]): Promise<RequestRecord[]> {
  // Each process warmed alone: spread over six, one warm-up would leave each a sixth of it,
  // and the N-process windows would then measure its code still being compiled.
  const most = Math.max(...concurrency);
  for (const setup of setups.filter((s) => s.processes === 1)) {
    for (const origin of all) {
      await measureRequests({ ...setup, origins: [origin] }, most, warmupSeconds * 1000);
    }
  }
  const records: RequestRecord[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const [index, c] of concurrency.entries()) {
      for (const setup of rotate(setups, rep + index)) {
        const sample = await measureRequests(setup, c, seconds * 1000);
        records.push({ rep, concurrency: c, era: setup.era, processes: setup.processes, sample });
        log(
          `rep ${rep + 1} c=${c} ${setup.era} × ${setup.processes}: ${sample.rps.toFixed(0)} req/s, server ${sample.serverMicros.toFixed(1)} µs/req, generator ${sample.generatorMicros.toFixed(1)}, Redis ${sample.redisMicros.toFixed(1)} (${sample.redisCommands.toFixed(2)} calls)`,
        );
      }
    }
  }
  return records;
}

try {
  const loadBefore = loadavg();
  const windows = reps * concurrency.length * 4;
  log(
    `${processes} processes; ${windows} windows of ${seconds} s, ${memoryRounds} memory rounds of ${memoryStreams} streams, 3 × ${reps} batches of ${changesPerBatch} changes to 0 or ${changeStreams} streams: about ${Math.ceil(windows * (seconds + 0.6) + 2 * processes * (warmupSeconds + 0.6) + 70)} s`,
  );
  cluster = await startScaleCluster(processes, "redis");
  redis = new RedisCounters(cluster.redis.url);
  const all = origins(cluster);
  const pids = cluster.backends.map((backend) => backend.pid);
  const setups: Setup[] = [];
  for (const [era, workload] of [
    ["modern", modernWorkload],
    ["legacy", legacyWorkload],
  ] as const) {
    setups.push(
      { era, processes: 1, origins: all.slice(0, 1), workload, pids, redis },
      { era, processes, origins: all, workload, pids, redis },
    );
  }
  const requests = await requestPhase(setups, all);
  const wire = {
    modern: await wireBytes(all[0]!, modernWorkload),
    legacy: await wireBytes(all[0]!, legacyWorkload),
  };
  const changes = {
    // A change no stream hears costs a tick or two of CPU a process: five times as many of them.
    none: await measureChanges(cluster, redis, "listen", 0, 5 * changesPerBatch, reps),
    listen: await measureChanges(cluster, redis, "listen", changeStreams, changesPerBatch, reps),
    get: await measureChanges(cluster, redis, "get", changeStreams, changesPerBatch, reps),
  };
  for (const [kind, batches] of Object.entries(changes)) {
    for (const b of batches)
      log(
        `${kind}: ${b.changes} changes to ${b.streams} streams in ${b.wallMs.toFixed(0)} ms: servers ${(b.serverMicros / 1000).toFixed(0)} ms, Redis ${(b.redisMicros / 1000).toFixed(1)} ms, reader ${(b.readerMicros / 1000).toFixed(0)} ms of CPU`,
      );
  }
  const memory = await measureStreamMemory(cluster.redis.url, memoryStreams, 200, memoryRounds);
  for (const m of memory)
    log(
      `memory: listen ${m.listen.heap.toFixed(0)} B heap, GET ${m.get.heap.toFixed(0)} B, session ${m.session.heap.toFixed(0)} B (Redis ${m.session.redis.toFixed(0)} B)`,
    );
  const run: CapacityRun = {
    machine: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}`,
    cores: cpus().length,
    processes,
    loadBefore,
    loadAfter: loadavg(),
    concurrency,
    requests,
    wire,
    memory,
    changes,
    processBudgetBytes: processBudget,
    redisBudgetBytes: redisBudget,
    linkBytesPerSecond: link,
  };
  console.log(`\n${formatCapacity(run).join("\n")}`);
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const file = `${resultsDir}capacity-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
  writeFileSync(file, `${JSON.stringify({ reps, seconds, ...run }, null, 2)}\n`);
  console.log(`\nraw samples: ${file}`);
} finally {
  await stop();
}
