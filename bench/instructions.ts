import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "undici";
import { positive } from "./config.js";
import { CONTENDERS, type ContenderId, EXPRESS_CONTENDERS, isContenderId } from "./contenders.js";
import { fixed } from "./report.js";
import { rawRequest } from "./request.js";
import type { ReadyMessage } from "./servers/serve.js";
import type { Slot, Workload } from "./workload.js";

// Instructions per request of each server, counted by Valgrind's callgrind
// (`npm run bench:instructions`; needs Debian's valgrind). Time on this shared 2-core machine
// moves by 20-50% between runs; an instruction count, with V8 on one thread (V8_FLAGS below),
// repeats to within 0.2%, so it shows what a change to the code did when the timings cannot. It
// is not time: the same instructions cost more where caches miss more (Express's per-request
// garbage). Each server runs under callgrind in its own process, takes BENCH_WARM requests to
// warm up, has its counters zeroed, then takes windows of BENCH_REQUESTS more, one at a time on
// one keep-alive connection per window (so every request meets the same event-loop path; or on
// BENCH_CONCURRENCY connections at once, each one request at a time), each
// window counted on its own, until two windows in a row agree to within 0.5% (at most
// BENCH_WINDOWS): their mean is the steady cost per request. The first windows after a warm-up
// still carry V8's last optimisations and a collection of the warm-up's garbage (bare node:http
// read 168.9 k, 101.9 k, 94.2 k, 94.1 k), which one window alone spreads over its requests, so
// that a ratio to bare moved with the window's length. A window counting far more than its
// neighbours (a timer's work under valgrind's slowness, e.g. 119.1 k, 143.2 k, 119.2 k) is passed
// over the same way; where no two agree, the mean of the later windows is reported (†).

const WARM = Math.round(positive("BENCH_WARM", 15_000));
const REQUESTS = Math.round(positive("BENCH_REQUESTS", 10_000));
const MAX_WINDOWS = Math.max(2, Math.round(positive("BENCH_WINDOWS", 8)));
// BENCH_CONCURRENCY=16: that many connections, each a client calling in a loop, so that what grows
// with concurrency (more requests in flight at once, more live at each collection) is counted.
const CONCURRENCY = Math.round(positive("BENCH_CONCURRENCY", 1));
/** Two windows in a row within this fraction of each other: the count is steady. */
const STEADY = 0.005;
const START_TIMEOUT_MS = 300_000;
// BENCH_SERVERS=bare,mcp-mount counts only those (default: both mounts and their bare hosts); any
// server of the benchmarks may be named, e.g. node-adapter, mcp-mount-no-telemetry and
// mcp-mount-no-schema, to see what each part of the mount costs, or mcp-mount-legacy for a legacy
// session's warm tools/call (its session opened before the warm-up).
const SERVERS = (process.env.BENCH_SERVERS?.split(",") ?? EXPRESS_CONTENDERS).map((id) => {
  if (!isContenderId(id))
    throw new TypeError(`BENCH_SERVERS: ${id} is no server of the benchmarks`);
  return id;
});
const run = promisify(execFile);
// V8 compiles and collects garbage on threads of its own, whose share of a counted window moves
// with how valgrind schedules them (a third of all instructions here, and ±3% of the total from
// run to run): `--single-threaded` does that work on the main thread, the same work counted the
// same way each run. BENCH_V8_THREADS=1 counts V8 as it runs by default.
//
// V8 also sizes its young generation by time: its memory reducer reads valgrind's fifty-fold
// slowness as a process gone idle, runs full collections no native run of this length has, and
// shrinks the young generation, after which a server scavenges up to four times as often (the
// mount: 20 scavenges per 10,000 requests before one such collection, 80 after; natively, 21).
// Which window that lands in decided the count. `--predictable-gc-schedule`, V8's flag for a
// schedule that does not depend on time, turns the reducer off and fixes how the heap grows, for
// every server alike: the bare server then scavenges 25 times per 10,000 requests, as natively
// (26), and the mount 40. BENCH_V8_GC=default leaves V8 its own schedule.
const V8_FLAGS = [
  ...(process.env.BENCH_V8_THREADS === "1" ? [] : ["--single-threaded"]),
  ...(process.env.BENCH_V8_GC === "default" ? [] : ["--predictable-gc-schedule"]),
];

/**
 * Sends requests `firstId`.. `firstId + n - 1` over CONCURRENCY connections at once, each sending
 * its next request when its last is answered (as many clients calling in a loop).
 */
function requestsInTurn(
  port: number,
  workload: Workload,
  slot: Slot,
  n: number,
  firstId: number,
): Promise<void> {
  const ids = (connection: number) => {
    const own: number[] = [];
    for (let id = firstId + connection; id < firstId + n; id += CONCURRENCY) own.push(id);
    return own;
  };
  return Promise.all(
    Array.from({ length: CONCURRENCY }, (_, connection) =>
      oneConnection(port, workload, slot, ids(connection)),
    ),
  ).then(() => {});
}

/** Sends requests `ids` one after another on one connection, checking each answer's status. */
async function oneConnection(
  port: number,
  workload: Workload,
  slot: Slot,
  ids: readonly number[],
): Promise<void> {
  const socket = connect(port, "127.0.0.1");
  socket.setEncoding("latin1");
  let buffered = "";
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    wake?.();
  };
  socket.on("data", (data: string) => {
    buffered += data;
    wake?.();
  });
  socket.on("error", fail).on("close", () => fail(new Error("the server closed the connection")));
  await once(socket, "connect");
  try {
    for (const id of ids) {
      socket.write(rawRequest(port, id, slot.headers, workload.body(id)));
      for (;;) {
        if (failure) throw failure;
        const end = buffered.indexOf("\r\n\r\n");
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1]);
        if (end >= 0 && buffered.length >= end + 4 + length) {
          if (!buffered.startsWith("HTTP/1.1 200")) throw new Error(buffered.slice(0, end));
          buffered = buffered.slice(end + 4 + length);
          break;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    }
  } finally {
    socket.removeAllListeners("close");
    socket.destroy();
  }
}

/** A server's counts per request, window by window, and the steady cost (undefined: never). */
interface Counted {
  windows: number[];
  steady: number | undefined;
}

/**
 * The cost per request to compare: the steady one, or where no two windows agreed (periodic work,
 * such as a major collection every other window) the mean of the windows after the first two.
 */
function perRequest({ windows, steady }: Counted): { cost: number; steady: boolean } {
  if (steady !== undefined) return { cost: steady, steady: true };
  const settled = windows.length > 2 ? windows.slice(2) : windows;
  return { cost: settled.reduce((a, b) => a + b, 0) / settled.length, steady: false };
}

/** Instructions per request of contender `id`, served under callgrind. */
async function count(id: ContenderId, dir: string): Promise<Counted> {
  const contender = CONTENDERS[id];
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--smc-check=all-non-file",
      `--callgrind-out-file=${join(dir, `${id}.%p`)}`,
      process.execPath,
      ...V8_FLAGS,
      // E.g. --perf-basic-prof, to look JIT code up by address in the dumps (BENCH_KEEP).
      ...(process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
      "--import",
      import.meta.resolve("tsx"),
      contender.entry,
    ],
    { env: { ...process.env, NODE_ENV: "production" }, stdio: ["ignore", "ignore", "pipe", "ipc"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill(), START_TIMEOUT_MS);
  try {
    const [ready] = (await Promise.race([
      once(child, "message"),
      once(child, "exit").then(() => {
        throw new Error(`${id} exited before listening: ${stderr.slice(-2000)}`);
      }),
    ])) as [ReadyMessage];
    clearTimeout(timer);
    const pid = String(child.pid);
    const { workload } = contender;
    // A legacy session is opened (initialize, initialized) as the throughput runs open it.
    const client = new Client(`http://127.0.0.1:${ready.port}`);
    const slot = await workload.open(client).finally(() => client.close());
    const send = (n: number, firstId: number) =>
      requestsInTurn(ready.port, workload, slot, n, firstId);
    await send(WARM, 1);
    await run("callgrind_control", ["--zero", pid]);
    const windows: number[] = [];
    for (let w = 1; w <= MAX_WINDOWS; w++) {
      await send(REQUESTS, WARM + 1 + (w - 1) * REQUESTS);
      // A dump holds what was counted since the last one: this window alone.
      await run("callgrind_control", ["--dump", pid]);
      const dump = readFileSync(join(dir, `${id}.${pid}.${w}`), "utf8");
      // The totals line, as before windows: a first dump's summary line can leave work out.
      const totals = /^totals:\s+(\d+)/m.exec(dump) ?? /^summary:\s+(\d+)/m.exec(dump);
      if (!totals) throw new Error(`no totals in ${id}'s callgrind dump`);
      windows.push(Number(totals[1]) / REQUESTS);
      if (windows.length >= 2) {
        const previous = windows.at(-2)!;
        const last = windows.at(-1)!;
        if (Math.abs(last - previous) <= STEADY * previous)
          return { windows, steady: (previous + last) / 2 };
      }
    }
    return { windows, steady: undefined };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.send("stop");
      else child.kill();
      await once(child, "exit");
    }
  }
}

const dir = process.env.BENCH_KEEP || mkdtempSync(join(tmpdir(), "mcp-mount-callgrind-"));
mkdirSync(dir, { recursive: true });
const counted = new Map<ContenderId, Counted>();
try {
  // Two at a time, one per core.
  for (let i = 0; i < SERVERS.length; i += 2) {
    const pair = SERVERS.slice(i, i + 2);
    const counts = await Promise.all(pair.map((id) => count(id, dir)));
    for (const [index, id] of pair.entries()) counted.set(id, counts[index]!);
    process.stderr.write(`counted ${pair.join(", ")}\n`);
  }
} finally {
  // BENCH_KEEP=dir keeps the dumps there, one per window.
  if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
}

const BARE_OF: Partial<Record<ContenderId, ContenderId>> = {
  "mcp-mount": "bare",
  "mcp-mount-express": "bare-express",
  "node-adapter": "bare",
  "mcp-mount-no-telemetry": "bare",
  "mcp-mount-no-schema": "bare",
  // The bare server answers the modern request canned: the floor of any tools/call's HTTP.
  "mcp-mount-legacy": "bare",
};
const k = (n: number) => `${fixed(n / 1000, 1)} k`;
console.log(
  `\nNode ${process.version}; ${WARM} requests to warm up, then windows of ${REQUESTS} (${CONCURRENCY === 1 ? "one request at a time" : `${CONCURRENCY} connections, each one request at a time`}), until two in a row agree to ${STEADY * 100}%\n`,
);
console.log(
  "| server | windows (per request) | per request | beyond its bare host | this ÷ bare |",
);
console.log("| --- | --- | ---: | ---: | ---: |");
let periodic = false;
for (const id of SERVERS) {
  const own = counted.get(id)!;
  const { cost, steady } = perRequest(own);
  periodic ||= !steady;
  const bareId = BARE_OF[id];
  const bare = bareId && counted.has(bareId) ? perRequest(counted.get(bareId)!).cost : undefined;
  console.log(
    `| ${CONTENDERS[id].label} | ${own.windows.map(k).join(", ")} | ${k(cost)}${steady ? "" : " †"} | ${bare === undefined ? "—" : k(cost - bare)} | ${bare === undefined ? "—" : fixed(cost / bare, 2)} |`,
  );
}
if (periodic)
  console.log(
    `\n† No two windows in a row agreed to ${STEADY * 100}% (periodic work, such as a major collection every other window): the mean of the windows after the first two.`,
  );
