import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { type RunningServer, startServer, verifyServer } from "./child.js";
import { readConfig } from "./config.js";
import { CONTENDERS } from "./contenders.js";
import { formatLegacyTables, summarizeLegacy } from "./legacy-report.js";
import { measure } from "./load.js";
import { formatServerRows, formatTables, type Sample, summarize } from "./report.js";

// tools/call throughput and latency of mcp-mount against a bare node:http ceiling, the official
// SDK v2 and tmcp; with BENCH_ERA=legacy, of its legacy session path against its modern one, the
// ceiling and the official SDK v1. The machine is shared and noisy, so servers alternate rep by
// rep in rotating order and the report gives medians of ratios paired within a rep.

const config = readConfig();
const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
mkdirSync(resultsDir, { recursive: true });
const profileDir = `${resultsDir}profiles`;
const machine = {
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  loadBefore: loadavg(),
};

const log = (line: string) => process.stderr.write(`${line}\n`);
const rotate = <T>(items: T[], by: number) => items.map((_, i) => items[(i + by) % items.length]!);

const running: RunningServer[] = [];
const stopAll = () => Promise.all(running.map((server) => server.stop()));
process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

try {
  for (const id of config.servers) {
    const cpuProfDir = config.cpuProf.includes(id) ? profileDir : undefined;
    const server = await startServer(CONTENDERS[id], cpuProfDir ? { cpuProfDir } : {});
    running.push(server);
    await verifyServer(server);
    log(`${server.contender.label}: pid ${server.pid} on ${server.origin}, tools/call verified`);
  }
  const planned =
    config.reps * config.concurrency.length * running.length * (config.seconds + 0.25);
  log(
    `${config.reps} reps × ${config.concurrency.join("/")} × ${running.length} servers × ${config.seconds} s: about ${Math.ceil(planned + running.length * config.concurrency.length * config.warmupSeconds)} s`,
  );
  for (const server of running) {
    for (const concurrency of config.concurrency) {
      await measure(server.origin, {
        concurrency,
        measureMs: config.warmupSeconds * 1000,
        workload: server.contender.workload,
      });
    }
  }
  const samples: Sample[] = [];
  for (let rep = 0; rep < config.reps; rep++) {
    for (const [index, concurrency] of config.concurrency.entries()) {
      for (const server of rotate(running, rep + index)) {
        const result = await measure(server.origin, {
          concurrency,
          measureMs: config.seconds * 1000,
          cpuMicros: server.cpuMicros,
          workload: server.contender.workload,
        });
        samples.push({ rep, concurrency, server: server.contender.id, result });
        log(
          `rep ${rep + 1} c=${concurrency} ${server.contender.label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, server CPU ${result.cpuPerRequest.toFixed(0)} µs/req`,
        );
      }
    }
  }
  const summary = summarize(samples, config.concurrency, config.servers);
  const legacy = config.era === "legacy" ? summarizeLegacy(samples, config.concurrency) : undefined;
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = `${resultsDir}bench-${config.era === "legacy" ? "legacy-" : ""}${stamp}.json`;
  writeFileSync(
    file,
    `${JSON.stringify({ config, machine: { ...machine, loadAfter: loadavg() }, summary, legacy, samples }, null, 2)}\n`,
  );
  console.log(
    `\n${machine.cores} × ${machine.cpu}, Node ${machine.node}, load ${machine.loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")} after`,
  );
  console.log(
    `medians over ${config.reps} reps of ${config.seconds} s; ratios paired within a rep\n`,
  );
  console.log(
    legacy
      ? [...formatServerRows(summary.rows), formatLegacyTables(legacy)].join("\n")
      : formatTables(summary),
  );
  console.log(`\nraw samples: ${file}`);
} finally {
  await stopAll();
}
