import { Pool } from "undici";
import { ECHO_MARK, MCP_PATH } from "./request.js";
import { quantile } from "./stats.js";
import { modernWorkload, type Slot, type Workload } from "./workload.js";

/** What one timed run against one server at one concurrency measured. */
export interface RunResult {
  requests: number;
  seconds: number;
  /** Completed requests per second. */
  rps: number;
  /** Latency quantiles in milliseconds. */
  p50: number;
  p99: number;
  /** Server CPU time (user + system) per request in microseconds; NaN without a probe. */
  cpuPerRequest: number;
}

/** Options of {@link measure}. */
export interface MeasureOptions {
  /** Requests in flight at once, each on its own keep-alive connection. */
  concurrency: number;
  /** Unrecorded load on the same connections before the timed window. @default 250 */
  warmMs?: number;
  /** Length of the timed window. */
  measureMs: number;
  /** Reads the server's CPU time in microseconds, before and after the timed window. */
  cpuMicros?: () => Promise<number>;
  /** What each slot sets up and sends. @default modernWorkload */
  workload?: Workload;
  /** Called right before and right after the timed window, e.g. to reset and read counters. */
  window?: WindowProbe;
}

/** Hooks around the timed window of {@link measure}. */
export interface WindowProbe {
  start(): Promise<void>;
  end(): Promise<void>;
}

let nextId = 1;

/**
 * Closed-loop load: `concurrency` loops each send the next tools/call as soon as the previous
 * answer is read, over a pool of as many connections (pipelining 1). Each loop is a slot of the
 * workload, set up before the warm-up (a legacy session) and released after the timed window.
 * Given several origins, each request goes to the next origin in turn (client-side round-robin,
 * no stickiness), each origin with a pool of its own.
 * Throws on the first response that is not a 200 carrying the echoed text.
 */
export async function measure(
  origin: string | readonly string[],
  options: MeasureOptions,
): Promise<RunResult> {
  const pools = (typeof origin === "string" ? [origin] : origin).map(
    (each) => new Pool(each, { connections: options.concurrency, pipelining: 1 }),
  );
  let turn = 0;
  const next = () => pools[turn++ % pools.length]!;
  const workload = options.workload ?? modernWorkload;
  try {
    const slots = await Promise.all(
      Array.from({ length: options.concurrency }, () => workload.open(next())),
    );
    await drive(next, workload, slots, options.warmMs ?? 250);
    const latencies: number[] = [];
    await options.window?.start();
    const cpuBefore = (await options.cpuMicros?.()) ?? Number.NaN;
    const started = performance.now();
    await drive(next, workload, slots, options.measureMs, latencies);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = (await options.cpuMicros?.()) ?? Number.NaN;
    await options.window?.end();
    await Promise.all(slots.map((slot) => slot.close()));
    const sorted = Float64Array.from(latencies).sort();
    return {
      requests: latencies.length,
      seconds,
      rps: latencies.length / seconds,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      cpuPerRequest: (cpuAfter - cpuBefore) / latencies.length,
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

async function drive(
  next: () => Pool,
  workload: Workload,
  slots: Slot[],
  durationMs: number,
  latencies?: number[],
): Promise<void> {
  const until = performance.now() + durationMs;
  const loop = async ({ headers }: Slot) => {
    while (performance.now() < until) {
      const id = nextId++;
      const started = performance.now();
      const { statusCode, body } = await next().request({
        path: MCP_PATH,
        method: "POST",
        headers,
        body: workload.body(id),
      });
      const text = await body.text();
      if (statusCode !== 200 || !text.includes(ECHO_MARK)) {
        throw new Error(`request ${id} failed: HTTP ${statusCode} ${text.slice(0, 300)}`);
      }
      latencies?.push(performance.now() - started);
    }
  };
  await Promise.all(slots.map(loop));
}
