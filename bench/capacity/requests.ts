import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus } from "node:os";
import { Pool } from "undici";
import { measure } from "../load.js";
import { MCP_PATH } from "../request.js";
import { cpuMicrosOf, type RedisCounters, type RedisCounts } from "../scale-cluster.js";
import type { Workload } from "../workload.js";

// Per-request costs of the capacity benchmark: one timed closed-loop window (bench/load.ts) with
// the servers' CPU (/proc), this process's CPU (the load generator's) and Redis's counters read
// around it, and the bytes one request and its response take on the wire.

/** What one timed window cost, per request. */
export interface RequestSample {
  rps: number;
  p50: number;
  p99: number;
  /** CPU (user + system) of every server process, µs per request. */
  serverMicros: number;
  /** CPU of this process, which generates the load, µs per request. */
  generatorMicros: number;
  /** Redis's CPU, µs per request. */
  redisMicros: number;
  /** Redis calls per request, commands run inside scripts included. */
  redisCommands: number;
  /** The same by command. */
  commands: Record<string, number>;
  /** Cores the whole machine kept busy over the window (steal included), ours and others'. */
  busyCores: number;
}

/** The machine's CPU time so far from /proc/stat's first line (Linux), busy and in all, in ticks. */
function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy, total: busy + idle! + iowait! };
}

/** One setup: where its requests go and whose CPU counts. */
export interface RequestSetup {
  origins: string[];
  workload: Workload;
  /** Every server process of the cluster, busy or not: work one causes in another counts. */
  pids: number[];
  redis: RedisCounters;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const ownMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** Runs one timed window of `measureMs` at `concurrency` on `setup`. */
export async function measureRequests(
  setup: RequestSetup,
  concurrency: number,
  measureMs: number,
): Promise<RequestSample> {
  let generatorBefore = 0;
  let generator = 0;
  let ticksBefore = { busy: 0, total: 0 };
  let busyShare = 0;
  let counts: RedisCounts = { commands: {}, reads: 0, cpuMicros: 0 };
  const result = await measure(setup.origins, {
    concurrency,
    measureMs,
    workload: setup.workload,
    cpuMicros: async () => cpuMicrosOf(setup.pids),
    window: {
      async start() {
        await setup.redis.reset();
        generatorBefore = ownMicros();
        ticksBefore = machineTicks();
      },
      async end() {
        generator = ownMicros() - generatorBefore;
        const ticks = machineTicks();
        busyShare = (ticks.busy - ticksBefore.busy) / (ticks.total - ticksBefore.total);
        counts = await setup.redis.read();
      },
    },
  });
  const per = (n: number) => n / result.requests;
  return {
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    serverMicros: result.cpuPerRequest,
    generatorMicros: per(generator),
    redisMicros: per(counts.cpuMicros),
    redisCommands: per(sum(Object.values(counts.commands))),
    commands: Object.fromEntries(
      Object.entries(counts.commands).map(([name, calls]) => [name, per(calls)]),
    ),
    busyCores: busyShare * cpus().length,
  };
}

/** Bytes of one request and of its response as HTTP/1.1 puts them on a keep-alive connection. */
export interface WireBytes {
  request: number;
  response: number;
}

/** The length of the first HTTP/1.1 response in `received`; undefined until it is whole. */
function responseLength(received: Buffer): number | undefined {
  const head = received.indexOf("\r\n\r\n");
  if (head === -1) return undefined;
  const headers = received.subarray(0, head).toString("latin1").toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(headers)?.[1];
  if (length !== undefined) {
    const total = head + 4 + Number(length);
    return received.length >= total ? total : undefined;
  }
  const end = received.indexOf("\r\n0\r\n\r\n", head);
  return end === -1 ? undefined : end + 7;
}

/**
 * Sends one request of `workload` to `origin` over a raw socket, the headers undici sends
 * (`host`, `connection`, `content-length`) written out, and counts both directions' bytes.
 * A legacy workload's session is opened first and deleted after.
 */
export async function wireBytes(origin: string, workload: Workload): Promise<WireBytes> {
  const pool = new Pool(origin, { connections: 1 });
  const slot = await workload.open(pool);
  try {
    const { host, port } = new URL(origin);
    const body = workload.body(1);
    const lines = Object.entries(slot.headers).map(([name, value]) => `${name}: ${value}\r\n`);
    const request = `POST ${MCP_PATH} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n${lines.join("")}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const response = await new Promise<number>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1");
      let received = Buffer.alloc(0);
      socket.on("error", reject);
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const length = responseLength(received);
        if (length === undefined) return;
        socket.destroy();
        if (!received.subarray(0, 12).toString("latin1").endsWith("200")) {
          reject(new Error(`wire probe: ${received.subarray(0, 300).toString("utf8")}`));
        } else resolve(length);
      });
      socket.write(request);
    });
    return { request: Buffer.byteLength(request), response };
  } finally {
    await slot.close();
    await pool.close();
  }
}
