import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type RunningServer, startServer, verifyServer } from "./child.js";
import { positive, positiveIntegers } from "./config.js";
import { measure } from "./load.js";
import { fixed, type PairableSample, pairedRatios, ratio } from "./report.js";
import { median } from "./stats.js";
import { modernWorkload } from "./workload.js";

// What telemetry costs modern tools/call: the same server with telemetry off, on with no SDK
// registered (the API's no-ops; the goal: no measurable cost), and with an SDK that
// exports to nowhere in each mode: full sampling every span, full with the SDK sampling 10% of
// traces (parent-based ratio) and propagate (no span of ours); and, to tell our spans from the
// SDK's own cost, that SDK registered with telemetry off, and with telemetry off but one span and
// one duration record per request made by hand (the floor: what the SDK charges for the least a
// conforming instrumentation does), sampling all and sampling 10% (the floor of the 10% mode: the
// metric is recorded for every request, sampled or not). Each runs in its own process, the eight interleaved rep by
// rep in rotating order; ratios are paired within a rep. Issue 36's goals, in CPU per request:
// 10% sampled ≤ 1.05× and propagate ≤ 1.03× the SDK with telemetry off, full ≤ 1.1× the floor.

const MODES = [
  { id: "off", label: "telemetry: false" },
  { id: "api", label: "on, no SDK" },
  { id: "sdk-off", label: "SDK registered, telemetry: false" },
  { id: "floor", label: "SDK, telemetry: false, one span + one record per request by hand" },
  {
    id: "floor-10",
    label: "SDK sampling 10%, telemetry: false, one span + one record per request by hand",
  },
  { id: "sdk", label: "full, SDK sampling all" },
  { id: "sdk-10", label: "full, SDK sampling 10% (parent-based ratio)" },
  { id: "propagate", label: "propagate, SDK registered" },
] as const;
type Mode = (typeof MODES)[number]["id"];

const reps = Math.round(positive("BENCH_REPS", 5));
const seconds = positive("BENCH_SECONDS", 2);
const warmupSeconds = positive("BENCH_WARMUP_SECONDS", 1);
const concurrencies = positiveIntegers("BENCH_CONCURRENCY", [1, 16, 64]);
const entry = fileURLToPath(new URL("./servers/mcp-mount-telemetry.ts", import.meta.url));
// BENCH_CPU_PROF=sdk,off (modes) writes their profiles here; bench/profile-summary.ts reads them.
const profileDir = fileURLToPath(new URL("./results/profiles/", import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);
const rotate = <T>(items: readonly T[], by: number) =>
  items.map((_, i) => items[(i + by) % items.length]!);

/** Starts the server in `mode` (its child process inherits the environment as it is now). */
async function start(mode: Mode, label: string): Promise<RunningServer> {
  process.env.BENCH_TELEMETRY = mode;
  const contender = { id: "mcp-mount" as const, label, entry, workload: modernWorkload };
  const profiled = process.env.BENCH_CPU_PROF?.split(",").includes(mode);
  const server = await startServer(contender, profiled ? { cpuProfDir: profileDir } : {});
  await verifyServer(server);
  log(`${label}: pid ${server.pid} on ${server.origin}, tools/call verified`);
  return server;
}

/**
 * Each mode with an SDK registered against that SDK with telemetry off, CPU per request paired
 * within a rep, beside the goal for it (full's is against the floor, in the next table).
 */
function modesTable(samples: PairableSample[]): string[] {
  const lines = [
    "",
    "With an SDK registered, each mode ÷ that SDK with telemetry off, CPU per request (min–max):",
    "",
    "| concurrency | propagate | full, 10% sampled | full, all sampled |",
    "| ---: | ---: | ---: | ---: |",
  ];
  for (const concurrency of concurrencies) {
    const cells = (["propagate", "sdk-10", "sdk"] as const).map((id) =>
      ratio(pairedRatios(samples, concurrency, id, "sdk-off", "cpuPerRequest")),
    );
    lines.push(`| ${concurrency} | ${cells.join(" | ")} |`);
  }
  lines.push("| goal | ≤ 1.03 | ≤ 1.05 | ≤ 1.1 × the floor (below) |");
  return lines;
}

/** The modes measured in process too, against the first: what each adds to `mcp.handle()`. */
const HANDLE_MODES = ["sdk-off", "propagate", "sdk-10", "sdk"] as const;
const handleEntry = fileURLToPath(new URL("./telemetry-handle.ts", import.meta.url));

/**
 * CPU per `mcp.handle()` in each SDK mode, a fresh process per mode and rep (rotating order),
 * with each mode's median and its ratio to telemetry off paired within a rep.
 */
async function handleTable(): Promise<string[]> {
  const micros = new Map<string, number[]>(HANDLE_MODES.map((id) => [id, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const id of rotate(HANDLE_MODES, rep)) {
      const { stdout } = await promisify(execFile)("npx", ["tsx", handleEntry, id]);
      micros.get(id)!.push(Number(stdout.trim()));
      log(`rep ${rep + 1} mcp.handle() ${id}: ${Number(stdout.trim()).toFixed(2)} µs/call`);
    }
  }
  const off = micros.get("sdk-off")!;
  const lines = [
    "",
    "In process, no socket: CPU per `mcp.handle()` of the echo tools/call, the SDK registered",
    `(least of 5 runs per process, median over ${reps} processes; ratios paired within a rep):`,
    "",
    "| mode | µs/call | ÷ telemetry off (min–max) | µs added |",
    "| --- | ---: | ---: | ---: |",
  ];
  for (const id of HANDLE_MODES) {
    const runs = micros.get(id)!;
    const ratios = runs.map((value, rep) => value / off[rep]!);
    const summary = `${fixed(median(ratios), 2)} (${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)})`;
    const added = fixed(median(runs) - median(off), 2);
    lines.push(
      `| ${MODES.find((mode) => mode.id === id)!.label} | ${fixed(median(runs), 2)} | ${summary} | ${added} |`,
    );
  }
  return lines;
}

const running = new Map<Mode, RunningServer>();
const stopAll = () => Promise.all([...running.values()].map((server) => server.stop()));
process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

try {
  for (const { id, label } of MODES) running.set(id, await start(id, label));
  for (const server of running.values())
    for (const concurrency of concurrencies)
      await measure(server.origin, { concurrency, measureMs: warmupSeconds * 1000 });
  const samples: PairableSample[] = [];
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
    "| concurrency | telemetry | req/s | server CPU µs/req | req/s ÷ off (min–max) | CPU/req ÷ off (min–max) |",
    "| ---: | --- | ---: | ---: | ---: | ---: |",
  ];
  for (const concurrency of concurrencies) {
    for (const { id, label } of MODES) {
      const runs = samples.filter((s) => s.concurrency === concurrency && s.server === id);
      const rps = median(runs.map((s) => s.result.rps));
      const cpu = median(runs.map((s) => s.result.cpuPerRequest));
      const vsOff = id === "off" ? "1" : ratio(pairedRatios(samples, concurrency, id, "off"));
      const cpuVsOff =
        id === "off" ? "1" : ratio(pairedRatios(samples, concurrency, id, "off", "cpuPerRequest"));
      lines.push(
        `| ${concurrency} | ${label} | ${fixed(rps, 0)} | ${fixed(cpu, 0)} | ${vsOff} | ${cpuVsOff} |`,
      );
    }
  }
  lines.push(...modesTable(samples));
  lines.push(
    "",
    "What the SDK itself charges for the least a conforming instrumentation does (one span and one",
    "duration record per request), sampling all and sampling 10%, and what ours costs beyond that",
    "floor (CPU per request):",
    "",
    "| concurrency | floor ÷ SDK, telemetry off | ours ÷ floor | floor, 10% ÷ SDK, telemetry off | ours, 10% ÷ floor, 10% |",
    "| ---: | ---: | ---: | ---: | ---: |",
  );
  const cpuRatio = (concurrency: number, of: Mode, to: Mode) =>
    ratio(pairedRatios(samples, concurrency, of, to, "cpuPerRequest"));
  for (const concurrency of concurrencies) {
    const cells = [
      cpuRatio(concurrency, "floor", "sdk-off"),
      cpuRatio(concurrency, "sdk", "floor"),
      cpuRatio(concurrency, "floor-10", "sdk-off"),
      cpuRatio(concurrency, "sdk-10", "floor-10"),
    ];
    lines.push(`| ${concurrency} | ${cells.join(" | ")} |`);
  }
  lines.push(...(await handleTable()));
  console.log(`\n${lines.join("\n")}`);
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const file = `${resultsDir}bench-telemetry-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
  writeFileSync(file, `${JSON.stringify({ reps, seconds, concurrencies, samples }, null, 2)}\n`);
  console.log(`\nraw samples: ${file}`);
} finally {
  await stopAll();
}
