import { spawn } from "node:child_process";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { type Cluster, type RedisTopology, startCluster } from "../test/helpers/cluster.js";
import { positive, positiveIntegers } from "./config.js";
import { fixed } from "./report.js";
import { LEGACY_VERSION, MCP_PATH, REQUEST_HEADERS } from "./request.js";
import {
  cpuMicrosOf,
  cpuProfileArgs,
  RedisCounters,
  type RedisCounts,
  startScaleCluster,
} from "./scale-cluster.js";
import { openAll, openSse } from "./sse.js";
import { median, quantile } from "./stats.js";
import { legacyWorkload } from "./workload.js";

// Fan-out latency (`npm run bench:fanout`): legacy GET streams on initialized sessions and modern
// `subscriptions/listen` streams, spread evenly over three processes (BENCH_PROCESSES) sharing one
// Redis; then one tools list change, triggered by a tools/call on one process, and the time from
// sending that call to the notification's arrival on every stream. Each stream is its own
// loopback connection (raw node:http, no pooling), read with a minimal SSE framer so the reader
// adds little delay. The ceiling: a bare node:http server holding as many streams in one process
// and writing the same event to each (bench/servers/fanout-bare.ts), its changes alternating with
// ours when the reader has file descriptors for both sets of streams (up to 9,000 each), else
// after ours. BENCH_BARE_PROCESSES spreads the ceiling's streams over that many bare processes,
// all told at once: what splitting the same writes over processes costs, with no MCP in it.
// BENCH_TOPOLOGY=cluster puts the processes on a Redis Cluster of three masters with a replica
// each instead of one node; Redis's counters are then summed over the masters.

/** A whole number of streams from environment variable `name` (0 allowed), or `fallback`. */
function streamCount(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new TypeError(`${name} must be a whole number`);
  return value;
}

const legacyCount = streamCount("BENCH_LEGACY_STREAMS", 2_500);
const modernCount = streamCount("BENCH_MODERN_STREAMS", 2_500);
/** mcp-mount processes sharing the streams on one Redis. */
const processes = positiveIntegers("BENCH_PROCESSES", [3])[0]!;
/** Bare processes sharing the ceiling's streams, each told of the change at once. */
const bareProcesses = positiveIntegers("BENCH_BARE_PROCESSES", [1])[0]!;
const reps = Math.round(positive("BENCH_REPS", 5));
const topology = (process.env.BENCH_TOPOLOGY || "standalone") as RedisTopology;
if (topology !== "standalone" && topology !== "cluster")
  throw new TypeError("BENCH_TOPOLOGY must be standalone or cluster");
/** The first change runs cold code in every process: reported, left out of the medians. */
const changes = reps + 1;
/** Change slots per stream: ours and the ceiling's. */
const slots = 2 * changes;
/** Streams per set the reader can hold next to the other set (its file limit is 20,000). */
const INTERLEAVED_MAX = 9_000;
/** Longest wait for every stream to hear one change. */
const DELIVERY_TIMEOUT_MS = 30_000;
const CHANGE = "notifications/tools/list_changed";

const log = (line: string) => process.stderr.write(`${line}\n`);
const label = (change: number) => (change === 0 ? "cold" : String(change));

interface Watched {
  kind: "legacy" | "modern" | "bare";
  /** Index of the process holding the stream. */
  backend: number;
  /** When each rep's change arrived (performance.now()); NaN until it does. */
  arrivals: number[];
  response: IncomingMessage;
}

let rep = -1;
let waiting = 0;
let allArrived: () => void = () => {};

/** Opens a long-lived SSE stream whose arrivals of each rep's change are timed. */
async function openStream(
  port: number,
  method: "GET" | "POST",
  headers: Record<string, string>,
  body?: string,
): Promise<{ response: IncomingMessage; arrivals: number[] }> {
  const arrivals = Array.from({ length: slots }, () => Number.NaN);
  const response = await openSse(port, method, headers, body, (event) => {
    if (event.includes(CHANGE) && rep >= 0 && Number.isNaN(arrivals[rep]!)) {
      arrivals[rep] = performance.now();
      if (--waiting === 0) allArrived();
    }
  });
  return { response, arrivals };
}

const portOf = (cluster: Cluster, index: number) =>
  Number(new URL(cluster.backends[index]!.url).port);

const MODERN_VERSION = REQUEST_HEADERS["mcp-protocol-version"]!;
const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
};

async function openStreams(cluster: Cluster): Promise<Watched[]> {
  const n = cluster.backends.length;
  const pools = cluster.backends.map((backend) => new Pool(new URL(backend.url).origin));
  try {
    // Each session starts on one process and its GET stream opens on the next one.
    const legacy = await openAll(legacyCount, async (i) => {
      const slot = await legacyWorkload.open(pools[i % n]!);
      const backend = (i + 1) % n;
      const headers = {
        accept: "text/event-stream",
        "mcp-protocol-version": LEGACY_VERSION,
        "mcp-session-id": slot.headers["mcp-session-id"]!,
      };
      const stream = await openStream(portOf(cluster, backend), "GET", headers);
      return { kind: "legacy", backend, ...stream } satisfies Watched;
    });
    const modern = await openAll(modernCount, async (i) => {
      const backend = i % n;
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: `listen-${i}`,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: modernMeta },
      });
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN_VERSION,
        "mcp-method": "subscriptions/listen",
      };
      const stream = await openStream(portOf(cluster, backend), "POST", headers, body);
      return { kind: "modern", backend, ...stream } satisfies Watched;
    });
    return [...legacy, ...modern];
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

/** Calls `notify_tools_changed` on process `backend`; resolves to when it was sent and answered. */
async function trigger(
  cluster: Cluster,
  backend: number,
  id: number,
): Promise<{ sent: number; answered: number }> {
  const pool = new Pool(new URL(cluster.backends[backend]!.url).origin);
  try {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "notify_tools_changed", arguments: {}, _meta: modernMeta },
    });
    const headers = { ...REQUEST_HEADERS, "mcp-name": "notify_tools_changed" };
    // A first request opens the connection, so the timed one pays no TCP handshake.
    await (await pool.request({ path: MCP_PATH, method: "OPTIONS", headers: {} })).body.text();
    const sent = performance.now();
    const response = await pool.request({ path: MCP_PATH, method: "POST", headers, body });
    const text = await response.body.text();
    if (response.statusCode !== 200 || !text.includes('"notified"')) {
      throw new Error(`notify_tools_changed: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
    }
    return { sent, answered: performance.now() };
  } finally {
    await pool.close();
  }
}

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

function latencies(values: number[]): Latencies {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    count: sorted.length,
  };
}

/** One change and its delivery. */
interface Row {
  /** Index of the process the change was triggered on. */
  backend: number;
  /** Streams that heard it within the timeout. */
  heard: number;
  answeredMs: number;
  firstMs: number;
  all: Latencies;
  legacy: Latencies;
  modern: Latencies;
  /** Streams held by the process the change was triggered on, and by the others. */
  local: Latencies;
  remote: Latencies;
  /** CPU time spent from the trigger until 200 ms after the last arrival. */
  serversCpuMs: number;
  redisCpuMs: number;
  readerCpuMs: number;
  commands: Record<string, number>;
}

/** One of the ceiling's processes: its port, and how to end it. */
interface Bare {
  port: number;
  pid: number;
  stop(): void;
}

function startBare(): Promise<Bare> {
  const script = fileURLToPath(new URL("./servers/fanout-bare.ts", import.meta.url));
  const child = spawn(process.execPath, [...cpuProfileArgs(), "--import", "tsx", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const port = /listening (\d+)/.exec(out)?.[1];
      if (port) resolve({ port: Number(port), pid: child.pid!, stop: () => child.kill("SIGTERM") });
    });
    child.once("exit", (code) => reject(new Error(`fanout-bare exited with ${code}`)));
  });
}

/** Opens `count` streams on the ceiling's processes, spread evenly over them. */
function openBareStreams(bares: Bare[], count: number): Promise<Watched[]> {
  return openAll(count, async (i) => {
    const backend = i % bares.length;
    const stream = await openStream(bares[backend]!.port, "GET", { accept: "text/event-stream" });
    return { kind: "bare", backend, ...stream } satisfies Watched;
  });
}

/** Asks each of the ceiling's processes, all at once, to write one event to all its streams. */
async function triggerBare(bares: Bare[]): Promise<{ sent: number; answered: number }> {
  const sent = performance.now();
  await Promise.all(
    bares.map(
      (bare) =>
        new Promise<void>((resolve, reject) => {
          const req = httpRequest({
            host: "127.0.0.1",
            port: bare.port,
            method: "POST",
            agent: false,
          });
          req.on("error", reject);
          req.on("response", (response) => {
            response.resume();
            response.on("end", resolve);
          });
          req.end();
        }),
    ),
  );
  return { sent, answered: performance.now() };
}

/** Redis's counters over the nodes that hold the data: the one node, or each master, summed. */
class FleetCounters {
  readonly #parts: RedisCounters[];
  constructor(urls: string[]) {
    this.#parts = urls.map((url) => new RedisCounters(url));
  }
  async reset(): Promise<void> {
    await Promise.all(this.#parts.map((part) => part.reset()));
  }
  async read(): Promise<RedisCounts> {
    const counts = await Promise.all(this.#parts.map((part) => part.read()));
    const commands: Record<string, number> = {};
    for (const { commands: own } of counts)
      for (const [name, calls] of Object.entries(own))
        commands[name] = (commands[name] ?? 0) + calls;
    const sum = (value: (c: RedisCounts) => number) => counts.reduce((t, c) => t + value(c), 0);
    return { commands, reads: sum((c) => c.reads), cpuMicros: sum((c) => c.cpuMicros) };
  }
  close(): void {
    for (const part of this.#parts) part.close();
  }
}

/** The processes, on one Redis node or on a Redis Cluster (BENCH_TOPOLOGY). */
function startProcesses(): Promise<Cluster> {
  if (topology === "standalone") return startScaleCluster(processes, "redis");
  const script = fileURLToPath(new URL("./servers/scale.ts", import.meta.url));
  return startCluster({
    processes,
    topology,
    server: {
      script,
      env: { NODE_ENV: "production", BENCH_STORE: "redis" },
      listening: /^listening (\d+)$/m,
      execArgv: cpuProfileArgs(),
    },
  });
}

let cluster: Cluster | undefined;
const bares: Bare[] = [];
let redis: FleetCounters | undefined;
let streams: Watched[] = [];
let bareStreams: Watched[] = [];
const stop = async () => {
  for (const stream of [...streams, ...bareStreams]) stream.response.destroy();
  redis?.close();
  for (const bare of bares) bare.stop();
  await cluster?.stop();
};
process.once("SIGINT", () => void stop().then(() => process.exit(130)));

/** One change on `target`'s streams: sends it, waits for every stream, measures. */
async function runChange(
  slot: number,
  target: Watched[],
  send: () => Promise<{ sent: number; answered: number }>,
  backend: number,
  pids: number[],
): Promise<Row> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  rep = slot;
  waiting = target.length;
  const arrived = new Promise<void>((resolve) => {
    allArrived = resolve;
  });
  await redis!.reset();
  const serversBefore = cpuMicrosOf(pids);
  const readerBefore = process.cpuUsage();
  const { sent, answered } = await send();
  await Promise.race([arrived, new Promise((resolve) => setTimeout(resolve, DELIVERY_TIMEOUT_MS))]);
  // What the change cost, once the servers have finished their part of it.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const reader = process.cpuUsage(readerBefore);
  const counts = await redis!.read();
  const delay = (stream: Watched) => stream.arrivals[slot]! - sent;
  const heard = target.filter((stream) => !Number.isNaN(stream.arrivals[slot]!));
  const pick = (filter: (stream: Watched) => boolean) => latencies(heard.filter(filter).map(delay));
  rep = -1;
  return {
    backend,
    heard: heard.length,
    answeredMs: answered - sent,
    firstMs: Math.min(...heard.map(delay)),
    all: pick(() => true),
    legacy: pick((s) => s.kind === "legacy"),
    modern: pick((s) => s.kind === "modern"),
    local: pick((s) => s.backend === backend),
    remote: pick((s) => s.backend !== backend),
    serversCpuMs: (cpuMicrosOf(pids) - serversBefore) / 1000,
    redisCpuMs: counts.cpuMicros / 1000,
    readerCpuMs: (reader.user + reader.system) / 1000,
    commands: counts.commands,
  };
}

function logRow(who: string, change: number, row: Row, total: number): void {
  log(
    `${who} ${label(change)}: change on process ${row.backend}; ${row.heard}/${total} streams heard it; answered in ${row.answeredMs.toFixed(1)} ms; first ${row.firstMs.toFixed(1)} ms, p50 ${row.all.p50.toFixed(1)} ms, p99 ${row.all.p99.toFixed(1)} ms, max ${row.all.max.toFixed(1)} ms`,
  );
}

try {
  const loadBefore = loadavg();
  cluster = await startProcesses();
  // Each on the list as soon as it runs, so a failed start still stops the others.
  await Promise.all(
    Array.from({ length: bareProcesses }, async () => {
      bares.push(await startBare());
    }),
  );
  redis = new FleetCounters(
    cluster.redisCluster
      ? (await cluster.redisCluster.masters()).map((master) => master.url)
      : [cluster.redis.url],
  );
  const pids = cluster.backends.map((b) => b.pid);
  const total = legacyCount + modernCount;
  const interleaved = total <= INTERLEAVED_MAX;
  const opening = performance.now();
  streams = await openStreams(cluster);
  log(
    `${streams.length} streams open (${legacyCount} legacy GET, ${modernCount} listen) in ${((performance.now() - opening) / 1000).toFixed(1)} s`,
  );
  const openBare = async () => {
    bareStreams = await openBareStreams(bares, total);
    log(`${bareStreams.length} bare streams open`);
  };
  if (interleaved) await openBare();
  const rows: Row[] = [];
  const bareRows: Row[] = [];
  const bareChange = async (change: number) => {
    const row = await runChange(
      changes + change,
      bareStreams,
      () => triggerBare(bares),
      0,
      bares.map((bare) => bare.pid),
    );
    bareRows.push(row);
    logRow("bare", change, row, bareStreams.length);
  };
  for (let change = 0; change < changes; change++) {
    const backend = change % cluster.backends.length;
    const send = () => trigger(cluster!, backend, change);
    const row = await runChange(change, streams, send, backend, pids);
    rows.push(row);
    logRow("mcp-mount", change, row, streams.length);
    if (interleaved) await bareChange(change);
  }
  if (!interleaved) {
    for (const stream of streams) stream.response.destroy();
    await openBare();
    for (let change = 0; change < changes; change++) await bareChange(change);
  }
  const loadAfter = loadavg();
  const warm = rows.slice(1);
  const pair = (l: Latencies) => `${fixed(l.p50, 1)} / ${fixed(l.p99, 1)}`;
  const ms = (n: number) => fixed(n, 1);
  const lines = [
    `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}, load ${loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")} after (${loadAfter.map((n) => n.toFixed(2)).join(" ")} before the tables)`,
    `${legacyCount} legacy GET + ${modernCount} listen streams over ${cluster.backends.length} processes on ${topology === "cluster" ? "a Redis Cluster of 3 masters" : "one Redis"}; ms from sending the tools/call to the notification's arrival; the bare ceiling ${interleaved ? "interleaved, change by change" : "after ours"}`,
    "",
    "| change | on process | heard | first | p50 | p99 | max | legacy p50 / p99 | modern p50 / p99 | on the trigger's process p50 / p99 | on the others p50 / p99 |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const [i, row] of rows.entries()) {
    lines.push(
      `| ${label(i)} | ${row.backend} | ${row.heard}/${streams.length} | ${ms(row.firstMs)} | ${ms(row.all.p50)} | ${ms(row.all.p99)} | ${ms(row.all.max)} | ${pair(row.legacy)} | ${pair(row.modern)} | ${pair(row.local)} | ${pair(row.remote)} |`,
    );
  }
  const over = (value: (row: Row) => number) => ms(median(warm.map(value)));
  lines.push(
    `| median of ${warm.length} | | | ${over((r) => r.firstMs)} | ${over((r) => r.all.p50)} | ${over((r) => r.all.p99)} | ${over((r) => r.all.max)} | | | | |`,
    "",
    `| change | tools/call answered ms | CPU ms: ${processes} server${processes === 1 ? "" : "s"} | Redis | this reader | Redis calls during the change, by command |`,
    "| ---: | ---: | ---: | ---: | ---: | --- |",
  );
  for (const [i, row] of rows.entries()) {
    const commands = Object.entries(row.commands)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, calls]) => `${name} ${calls}`)
      .join(", ");
    lines.push(
      `| ${label(i)} | ${ms(row.answeredMs)} | ${ms(row.serversCpuMs)} | ${ms(row.redisCpuMs)} | ${ms(row.readerCpuMs)} | ${commands} |`,
    );
  }
  lines.push(
    "",
    `The bare node:http ceiling, ${total} streams in ${bareProcesses === 1 ? "one process" : `${bareProcesses} processes told at once`}:`,
    "",
    `| change | heard | first | p50 | p99 | max | CPU ms: server${bareProcesses === 1 ? "" : "s"} | this reader | mcp-mount ÷ bare: p99 | max |`,
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  const ratios = (i: number) => {
    const ours = rows[i]!.all;
    const theirs = bareRows[i]!.all;
    return { p99: ours.p99 / theirs.p99, max: ours.max / theirs.max };
  };
  for (const [i, row] of bareRows.entries()) {
    const ratio = ratios(i);
    lines.push(
      `| ${label(i)} | ${row.heard}/${bareStreams.length} | ${ms(row.firstMs)} | ${ms(row.all.p50)} | ${ms(row.all.p99)} | ${ms(row.all.max)} | ${ms(row.serversCpuMs)} | ${ms(row.readerCpuMs)} | ${fixed(ratio.p99, 2)} | ${fixed(ratio.max, 2)} |`,
    );
  }
  const warmRatios = bareRows.slice(1).map((_, i) => ratios(i + 1));
  const ours = median(warm.map((r) => r.all.p99));
  lines.push(
    `| median of ${warmRatios.length} | | ${fixed(median(bareRows.slice(1).map((r) => r.firstMs)), 1)} | ${fixed(median(bareRows.slice(1).map((r) => r.all.p50)), 1)} | ${fixed(median(bareRows.slice(1).map((r) => r.all.p99)), 1)} | ${fixed(median(bareRows.slice(1).map((r) => r.all.max)), 1)} | | | ${fixed(median(warmRatios.map((r) => r.p99)), 2)} | ${fixed(median(warmRatios.map((r) => r.max)), 2)} |`,
    "",
    processes === 3 && bareProcesses === 1
      ? `Targets: p99 ≤ 100 ms: ${ours <= 100 ? "met" : "MISSED"} (${fixed(ours, 1)} ms); ≤ 1.5 × the bare ceiling (p99, paired): ${median(warmRatios.map((r) => r.p99)) <= 1.5 ? "met" : "MISSED"}`
      : `Targets not judged: they are set for three processes against a one-process ceiling (this run: ${processes} against ${bareProcesses}).`,
  );
  console.log(`\n${lines.join("\n")}`);
  const missed = (list: Row[], count: number) => list.some((row) => row.heard < count);
  if (missed(rows, streams.length) || missed(bareRows, bareStreams.length)) process.exitCode = 1;
} finally {
  await stop();
}
