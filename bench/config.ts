import {
  type BenchEra,
  type BenchHost,
  CONTENDER_IDS,
  type ContenderId,
  ERA_CONTENDERS,
  EXPRESS_CONTENDERS,
  isContenderId,
} from "./contenders.js";

/** How one benchmark run is shaped; every field has an environment override. */
export interface BenchConfig {
  /** Traffic and default servers: modern tools/call, or legacy sessions (BENCH_ERA). @default "modern" */
  era: BenchEra;
  /** Rounds over every server and concurrency (BENCH_REPS). @default 7 */
  reps: number;
  /** Timed seconds per server, concurrency and rep (BENCH_SECONDS). @default 2 */
  seconds: number;
  /** Unrecorded seconds per server and concurrency before the first rep (BENCH_WARMUP_SECONDS). @default 1 */
  warmupSeconds: number;
  /** Requests in flight (BENCH_CONCURRENCY, comma-separated). @default [1, 16, 64] */
  concurrency: number[];
  /** Modern run only: express runs each mount beside its bare ceiling (BENCH_HOST). @default "node" */
  host: BenchHost;
  /** Servers to run (BENCH_SERVERS, comma-separated ids). @default the era's (or host's) contenders */
  servers: ContenderId[];
  /** Servers to run under `--cpu-prof` (BENCH_CPU_PROF, comma-separated ids). @default none */
  cpuProf: ContenderId[];
}

/** A positive number from environment variable `name`, or `fallback` when it is unset. */
export function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number`);
  return value;
}

function ids(name: string, fallback: readonly ContenderId[]): ContenderId[] {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return [...fallback];
  const list = raw.split(",").map((part) => part.trim());
  const unknown = list.filter((id) => !isContenderId(id));
  if (unknown.length > 0) {
    throw new TypeError(
      `${name}: unknown server ${unknown.join(", ")} (use ${CONTENDER_IDS.join(", ")})`,
    );
  }
  return CONTENDER_IDS.filter((id) => list.includes(id));
}

/** Positive integers listed (comma-separated) in environment variable `name`, or `fallback`. */
export function positiveIntegers(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  const values = raw ? raw.split(",").map((part) => Number(part.trim())) : [...fallback];
  if (values.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new TypeError(`${name} must list positive integers`);
  }
  return values;
}

/** Reads the configuration from the environment; throws on bad values. */
export function readConfig(): BenchConfig {
  const era = process.env.BENCH_ERA || "modern";
  if (era !== "modern" && era !== "legacy") {
    throw new TypeError("BENCH_ERA must be modern or legacy");
  }
  const host = process.env.BENCH_HOST || "node";
  if (host !== "node" && host !== "express") {
    throw new TypeError("BENCH_HOST must be node or express");
  }
  return {
    era,
    host,
    reps: Math.round(positive("BENCH_REPS", 7)),
    seconds: positive("BENCH_SECONDS", 2),
    warmupSeconds: positive("BENCH_WARMUP_SECONDS", 1),
    concurrency: positiveIntegers("BENCH_CONCURRENCY", [1, 16, 64]),
    servers: ids(
      "BENCH_SERVERS",
      host === "express" && era === "modern" ? EXPRESS_CONTENDERS : ERA_CONTENDERS[era],
    ),
    cpuProf: ids("BENCH_CPU_PROF", []),
  };
}
