import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { type Cluster, type ClusterServer, startCluster } from "../test/helpers/cluster.js";

// What the scale-out benchmarks share: server processes on the test suite's multi-process
// harness (its own redis-server on a free port, each process in its own group, all ended with
// the harness), their CPU time, and Redis's own counters.

/** Where a scale-out benchmark's processes keep their sessions. */
export type ScaleStore = "redis" | "memory";

/** Node options that make a benchmark's process write a `--cpu-prof` profile to BENCH_CPU_PROF_DIR. */
export function cpuProfileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

/** Starts `processes` copies of bench/servers/scale.ts on the harness's private Redis. */
export function startScaleCluster(processes: number, store: ScaleStore): Promise<Cluster> {
  const server: ClusterServer = {
    script: fileURLToPath(new URL("./servers/scale.ts", import.meta.url)),
    env: { NODE_ENV: "production", BENCH_STORE: store },
    listening: /^listening (\d+)$/m,
    execArgv: cpuProfileArgs(),
  };
  return startCluster({ processes, server });
}

/** The origin (`http://127.0.0.1:<port>`) of each of the cluster's processes. */
export function origins(cluster: Cluster): string[] {
  return cluster.backends.map((backend) => new URL(backend.url).origin);
}

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

/** CPU time (user + system) of processes so far, in µs, from /proc (Linux; 1/CLK_TCK steps). */
export function cpuMicrosOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1e6) / TICKS_PER_SECOND;
}

/** What Redis counted between {@link RedisCounters.reset} and {@link RedisCounters.read}. */
export interface RedisCounts {
  /** Calls per command, from `INFO commandstats`, commands run inside scripts included. */
  commands: Record<string, number>;
  /** `total_reads_processed`: reads from client sockets, about one per batch a client sent. */
  reads: number;
  /** Redis's CPU time (user + system), in µs. */
  cpuMicros: number;
}

/** Our own commands, not the servers': left out of the counts. */
const OWN = /^(info|config\|resetstat)$/;

function fields(info: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of info.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) map.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return map;
}

/** Reads Redis's command and CPU counters over a connection of its own. */
export class RedisCounters {
  readonly #redis: Redis;
  #cpuAtReset = 0;

  constructor(url: string) {
    this.#redis = new Redis(url);
  }

  /** Zeroes the command and read counters (`CONFIG RESETSTAT`). */
  async reset(): Promise<void> {
    await this.#redis.config("RESETSTAT");
    this.#cpuAtReset = await this.#cpu();
  }

  /** The counts since the last reset. */
  async read(): Promise<RedisCounts> {
    const stats = fields(await this.#redis.info("stats"));
    const cpuMicros = (await this.#cpu()) - this.#cpuAtReset;
    const commands: Record<string, number> = {};
    for (const [key, value] of fields(await this.#redis.info("commandstats"))) {
      const name = key.replace(/^cmdstat_/, "");
      const calls = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
      if (!OWN.test(name) && calls > 0) commands[name] = calls;
    }
    // Two of the reads were ours: the INFO cpu after the reset and this INFO stats.
    return { commands, reads: Number(stats.get("total_reads_processed") ?? 0) - 2, cpuMicros };
  }

  async #cpu(): Promise<number> {
    const cpu = fields(await this.#redis.info("cpu"));
    const seconds = Number(cpu.get("used_cpu_user")) + Number(cpu.get("used_cpu_sys"));
    return seconds * 1e6;
  }

  close(): void {
    this.#redis.disconnect();
  }
}
