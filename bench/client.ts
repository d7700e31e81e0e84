import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startServer, verifyServer } from "./child.js";
import {
  CALLER_IDS,
  CALLER_LABELS,
  type Caller,
  type CallerId,
  type CallWindow,
  connectCaller,
  drive,
  loadClientModule,
  OUR_CALLERS,
} from "./client/callers.js";
import { type IdleMemory, idleMemory } from "./client/memory.js";
import { positive, positiveIntegers } from "./config.js";
import { CONTENDERS } from "./contenders.js";
import { fixed, type PairableSample, pairedRatios, ratio } from "./report.js";
import { MCP_PATH } from "./request.js";
import { median } from "./stats.js";

// The client's throughput (issue 36, goal 4): McpClient calling the echo tool in loops against
// one mcp-mount server (its own process), through Node's fetch and through nodeFetch, beside the
// official SDK v2 client and a bare fetch loop posting the same JSON-RPC; one client each, shared by `c` concurrent loops, as an agent
// framework shares one. Calls per second and this process's CPU per call (the client's own
// cost: the server is elsewhere) are paired within a rep, callers alternating in rotating order.
// Then the memory an idle connected client holds (with --expose-gc).

const reps = Math.round(positive("BENCH_REPS", 5));
const seconds = positive("BENCH_SECONDS", 2);
const warmupSeconds = positive("BENCH_WARMUP_SECONDS", 1);
const concurrencies = positiveIntegers("BENCH_CONCURRENCY", [1, 16]);
const idleClients = Math.round(positive("BENCH_IDLE_CLIENTS", 200));
const log = (line: string) => process.stderr.write(`${line}\n`);
const rotate = <T>(items: readonly T[], by: number) =>
  items.map((_, i) => items[(i + by) % items.length]!);

const server = await startServer(CONTENDERS["mcp-mount"]);
process.once("SIGINT", () => void server.stop().then(() => process.exit(130)));
const callers = new Map<CallerId, Caller>();
try {
  await verifyServer(server);
  const url = `${server.origin}${MCP_PATH}`;
  // Memory first, while the heap holds nothing of the throughput runs' connections.
  const memory: IdleMemory[] = [];
  if ((globalThis as { gc?: unknown }).gc) {
    for (const id of ["mcp-mount-node", "mcp-mount", "sdk"] as const) {
      memory.push(await idleMemory(id, url, idleClients));
      log(
        `${CALLER_LABELS[id]}: ${(memory.at(-1)!.heapPerClient / 1024).toFixed(1)} KiB per idle client`,
      );
    }
  } else log("no --expose-gc: memory per idle client not measured");
  const module = await loadClientModule();
  for (const id of CALLER_IDS) callers.set(id, await connectCaller(id, module, url));
  for (const caller of callers.values())
    for (const c of concurrencies) await drive(caller, c, warmupSeconds * 1000);
  const loadBefore = loadavg();
  const samples: (PairableSample & { window: CallWindow })[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const [index, concurrency] of concurrencies.entries()) {
      for (const id of rotate(CALLER_IDS, rep + index)) {
        const window = await drive(callers.get(id)!, concurrency, seconds * 1000);
        // Pairing reads rps and cpuPerRequest: calls per second and client CPU per call here.
        const result = { rps: window.callsPerSecond, cpuPerRequest: window.cpuPerCall };
        samples.push({ rep, concurrency, server: id, result, window });
        log(
          `rep ${rep + 1} c=${concurrency} ${CALLER_LABELS[id]}: ${window.callsPerSecond.toFixed(0)} calls/s, client CPU ${window.cpuPerCall.toFixed(0)} µs/call`,
        );
      }
    }
  }
  await Promise.all([...callers.values()].map((caller) => caller.close()));
  callers.clear();
  const lines = [
    `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}, Node ${process.version}, load ${loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")} after; medians over ${reps} reps of ${seconds} s, ratios paired within a rep`,
    "",
    "| concurrency | client | calls/s | client CPU µs/call | calls/s ÷ SDK (≥ 2) | ÷ bare fetch (≥ 0.8) | CPU/call: SDK ÷ this | bare fetch ÷ this |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const c of concurrencies) {
    for (const id of CALLER_IDS) {
      const runs = samples.filter((s) => s.concurrency === c && s.server === id);
      const rps = median(runs.map((s) => s.window.callsPerSecond));
      const cpu = median(runs.map((s) => s.window.cpuPerCall));
      const cells = OUR_CALLERS.includes(id)
        ? [
            pairedRatios(samples, c, id, "sdk"),
            pairedRatios(samples, c, id, "fetch"),
            pairedRatios(samples, c, "sdk", id, "cpuPerRequest"),
            pairedRatios(samples, c, "fetch", id, "cpuPerRequest"),
          ].map(ratio)
        : ["", "", "", ""];
      lines.push(
        `| ${c} | ${CALLER_LABELS[id]} | ${fixed(rps, 0)} | ${fixed(cpu, 0)} | ${cells.join(" | ")} |`,
      );
    }
  }
  if (memory.length > 0) {
    lines.push(
      "",
      "| client | idle connected clients | heap per client | heap + buffers per client |",
    );
    lines.push("| --- | ---: | ---: | ---: |");
    for (const row of memory) {
      lines.push(
        `| ${CALLER_LABELS[row.id]} | ${row.clients} | ${fixed(row.heapPerClient / 1024, 1)} KiB | ${fixed(row.totalPerClient / 1024, 1)} KiB |`,
      );
    }
  }
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  const file = `${resultsDir}client-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
  writeFileSync(file, `${JSON.stringify({ reps, seconds, samples, memory }, null, 2)}\n`);
  console.log(`${lines.join("\n")}\n\nraw samples: ${file}`);
} finally {
  await Promise.all([...callers.values()].map((caller) => caller.close()));
  await server.stop();
}
