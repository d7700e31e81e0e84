import { fixed } from "../report.js";
import { median } from "../stats.js";
import { type RequestCost, sameMachineCeiling } from "./model.js";
import type { RequestSample } from "./requests.js";
import { type CapacityRun, ERAS, type Era, spread } from "./run.js";

// The per-request tables: unit costs on one process, and the check of the model against the
// measured N-process run (ratios paired within a rep).

/** One process's (or N processes') samples of one era at concurrency `c`. */
function records(run: CapacityRun, era: Era, c: number, processes: number): RequestSample[] {
  return run.requests
    .filter((r) => r.era === era && r.concurrency === c && r.processes === processes)
    .map((r) => r.sample);
}

/** The model's per-request costs: one process's medians at concurrency `c`. */
export function requestCost(run: CapacityRun, era: Era, c: number): RequestCost {
  const samples = records(run, era, c, 1);
  const mid = (pick: (s: RequestSample) => number) => median(samples.map(pick));
  return {
    serverMicros: mid((s) => s.serverMicros),
    generatorMicros: mid((s) => s.generatorMicros),
    redisMicros: mid((s) => s.redisMicros),
    redisCommands: mid((s) => s.redisCommands),
    requestBytes: run.wire[era].request,
    responseBytes: run.wire[era].response,
  };
}

/** Medians of each Redis command's calls per request, those under 0.005 left out. */
function byCommand(samples: RequestSample[]): string {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.commands)))].sort();
  const calls = names
    .map((name) => [name, median(samples.map((s) => s.commands[name] ?? 0))] as const)
    .filter(([, calls]) => calls >= 0.005)
    .map(([name, calls]) => `${name} ${fixed(calls, 2)}`);
  return calls.join(", ") || "none";
}

/** Per-request costs on one process, then Redis's calls by command. */
export function unitTable(run: CapacityRun): string[] {
  const lines = [
    "| traffic | c | req/s, 1 process | server CPU µs/req | generator CPU µs/req | Redis CPU µs/req | Redis calls/req | request / response bytes |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const era of ERAS) {
    for (const c of run.concurrency) {
      const s = records(run, era, c, 1);
      const col = (pick: (x: RequestSample) => number, digits: number) =>
        spread(s.map(pick), digits);
      lines.push(
        `| ${era} | ${c} | ${col((x) => x.rps, 0)} | ${col((x) => x.serverMicros, 1)} | ${col((x) => x.generatorMicros, 1)} | ${col((x) => x.redisMicros, 1)} | ${col((x) => x.redisCommands, 2)} | ${run.wire[era].request} / ${run.wire[era].response} |`,
      );
    }
  }
  lines.push("", "| traffic | c | processes | Redis calls per request, by command (medians) |");
  lines.push("| --- | ---: | ---: | --- |");
  for (const era of ERAS) {
    for (const c of run.concurrency) {
      for (const processes of [1, run.processes]) {
        lines.push(
          `| ${era} | ${c} | ${processes} | ${byCommand(records(run, era, c, processes))} |`,
        );
      }
    }
  }
  return lines;
}

/** One rep's check: the model's prediction from one process's costs against N processes. */
interface CheckPair {
  predicted: number;
  measured: number;
  /** Cores other work on the machine kept busy during the N-process window. */
  others: number;
  /** The prediction on the cores that other work left. */
  predictedLeft: number;
  /** CPU per request (server + generator + Redis), N processes ÷ one. */
  costRatio: number;
  /** Share of the cores left that the N-process run kept busy. */
  used: number;
}

const cpuOf = (s: RequestSample) => s.serverMicros + s.generatorMicros + s.redisMicros;

function checkPair(one: RequestSample, many: RequestSample, cores: number): CheckPair {
  const predicted = sameMachineCeiling({ ...one, requestBytes: 0, responseBytes: 0 }, cores);
  const ours = (many.rps * cpuOf(many)) / 1e6;
  const others = Math.max(0, many.busyCores - ours);
  return {
    predicted,
    measured: many.rps,
    others,
    predictedLeft: (predicted * (cores - others)) / cores,
    costRatio: cpuOf(many) / cpuOf(one),
    used: ours / (cores - others),
  };
}

/** Predicted against measured requests/s of the N-process run, paired within a rep. */
export function checkTable(run: CapacityRun): string[] {
  const n = run.processes;
  const lines = [
    `| traffic | c | predicted req/s: ${run.cores} × 1e6 ÷ (server + generator + Redis µs/req of 1 process) | measured req/s, ${n} processes | **measured ÷ predicted** | other work on the machine, cores | measured ÷ predicted on the cores left | CPU/req, ${n} processes ÷ 1 | share of the cores left kept busy |`,
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const era of ERAS) {
    for (const c of run.concurrency) {
      const pairs: CheckPair[] = [];
      for (const { rep, sample } of run.requests.filter(
        (r) => r.era === era && r.concurrency === c && r.processes === n,
      )) {
        const one = run.requests.find(
          (r) => r.rep === rep && r.era === era && r.concurrency === c && r.processes === 1,
        );
        if (one) pairs.push(checkPair(one.sample, sample, run.cores));
      }
      const col = (pick: (p: CheckPair) => number, digits: number) =>
        spread(pairs.map(pick), digits);
      lines.push(
        `| ${era} | ${c} | ${col((p) => p.predicted, 0)} | ${col((p) => p.measured, 0)} | **${col((p) => p.measured / p.predicted, 2)}** | ${col((p) => p.others, 2)} | ${col((p) => p.measured / p.predictedLeft, 2)} | ${col((p) => p.costRatio, 2)} | ${col((p) => p.used, 2)} |`,
      );
    }
  }
  return lines;
}
