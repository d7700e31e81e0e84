import { cpus, loadavg } from "node:os";
import { positive, positiveIntegers } from "./config.js";
import {
  connectDirect,
  type RunningGateway,
  startMcpProxy,
  startServe,
} from "./gateway-targets.js";
import { measure, type RunResult } from "./load.js";
import { median, summarizeRatios } from "./stats.js";
import { legacyWorkload, modernWorkload } from "./workload.js";

// tools/call throughput of one stdio upstream (the echo tool) reached three ways in the same run:
// directly with our client over stdio, through `mcp-mount serve` (modern and legacy clients),
// and through mcp-proxy (the same two). Rows alternate rep by rep in rotating order, as the
// machine is shared and noisy, and the ratios are medians of ratios paired within a rep.
// BENCH_REPS (3), BENCH_SECONDS (2), BENCH_CONCURRENCY (1,16).

const reps = Math.round(positive("BENCH_REPS", 3));
const seconds = positive("BENCH_SECONDS", 2);
const concurrencies = positiveIntegers("BENCH_CONCURRENCY", [1, 16]);
const log = (line: string) => process.stderr.write(`${line}\n`);

type RowId = "direct" | "serve-modern" | "serve-legacy" | "proxy-modern" | "proxy-legacy";
interface Sample {
  rep: number;
  concurrency: number;
  row: RowId;
  result: RunResult;
}

const direct = await connectDirect();
const gateways: RunningGateway[] = [];
try {
  const serve = await startServe();
  gateways.push(serve);
  const proxy = await startMcpProxy();
  gateways.push(proxy);
  log(`upstream over stdio; ${serve.label} on ${serve.origin}; mcp-proxy on ${proxy.origin}`);
  const through = (gateway: RunningGateway, era: "modern" | "legacy") => (c: number, ms: number) =>
    measure(gateway.origin, {
      concurrency: c,
      measureMs: ms,
      cpuMicros: gateway.cpuMicros,
      workload: era === "modern" ? modernWorkload : legacyWorkload,
    });
  const rows: [RowId, string, (c: number, ms: number) => Promise<RunResult>][] = [
    ["direct", "direct, our client over stdio", (c, ms) => direct.measure(c, ms)],
    ["serve-modern", `${serve.label}, modern client`, through(serve, "modern")],
    ["serve-legacy", `${serve.label}, legacy client`, through(serve, "legacy")],
    ["proxy-modern", "mcp-proxy, modern client", through(proxy, "modern")],
    ["proxy-legacy", "mcp-proxy, legacy client", through(proxy, "legacy")],
  ];
  // Warm every path once: JIT, the upstream's first calls, connection pools.
  for (const [, , run] of rows) for (const c of concurrencies) await run(c, 500);
  const samples: Sample[] = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const [index, concurrency] of concurrencies.entries()) {
      const order = rows.map((_, i) => rows[(i + rep + index) % rows.length]!);
      for (const [row, label, run] of order) {
        const result = await run(concurrency, seconds * 1000);
        samples.push({ rep, concurrency, row, result });
        log(
          `rep ${rep + 1} c=${concurrency} ${label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms`,
        );
      }
    }
  }
  console.log(report(samples, new Map(rows.map(([id, label]) => [id, label]))));
} finally {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await direct.close();
}

function report(samples: Sample[], labels: Map<RowId, string>): string {
  const lines = [
    `${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}, load ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}; medians over ${reps} reps of ${seconds} s`,
    "",
    "| c | path | req/s | p50 ms | gateway CPU µs/req |",
    "|---|---|---|---|---|",
  ];
  const of = (c: number, row: RowId) => samples.filter((s) => s.concurrency === c && s.row === row);
  for (const c of concurrencies) {
    for (const [row, label] of labels) {
      const results = of(c, row).map((s) => s.result);
      const cpu = median(results.map((r) => r.cpuPerRequest));
      lines.push(
        `| ${c} | ${label} | ${median(results.map((r) => r.rps)).toFixed(0)} | ${median(results.map((r) => r.p50)).toFixed(2)} | ${Number.isNaN(cpu) ? "—" : cpu.toFixed(0)} |`,
      );
    }
  }
  lines.push("", "| c | ratio (paired within a rep) | median | min–max |", "|---|---|---|---|");
  const pairs: [RowId, RowId, string][] = [
    ["serve-modern", "direct", "serve (modern) ÷ direct"],
    ["serve-legacy", "direct", "serve (legacy) ÷ direct"],
    ["serve-modern", "proxy-modern", "serve ÷ mcp-proxy, modern"],
    ["serve-legacy", "proxy-legacy", "serve ÷ mcp-proxy, legacy"],
  ];
  for (const c of concurrencies) {
    for (const [over, under, label] of pairs) {
      const ratios = of(c, over).flatMap((a) => {
        const b = of(c, under).find((s) => s.rep === a.rep);
        return b ? [a.result.rps / b.result.rps] : [];
      });
      const { median: mid, min, max } = summarizeRatios(ratios);
      lines.push(`| ${c} | ${label} | ${mid.toFixed(2)} | ${min.toFixed(2)}–${max.toFixed(2)} |`);
    }
  }
  return lines.join("\n");
}
