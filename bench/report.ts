import { CONTENDERS, type ContenderId } from "./contenders.js";
import type { RunResult } from "./load.js";
import { median, type RatioSummary, summarizeRatios } from "./stats.js";

/** One timed run, as recorded. */
export interface Sample {
  rep: number;
  concurrency: number;
  server: ContenderId;
  result: RunResult;
}

/** Medians of one server at one concurrency over the reps. */
export interface ServerRow {
  concurrency: number;
  server: ContenderId;
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
  /** Median over reps of this server's req/s divided by the bare server's in the same rep. */
  ofBare?: RatioSummary;
}

/** mcp-mount's paired throughput ratios at one concurrency, checked against the issue's targets. */
export interface TargetRow {
  concurrency: number;
  vsBare?: RatioSummary;
  vsSdk?: RatioSummary;
  vsTmcp?: RatioSummary;
  /** Whether the targets hold; undefined where none apply or a rival was not run. */
  met?: boolean;
  /** Paired server CPU per request, rival ÷ mcp-mount: the throughput ratio were each CPU-bound. */
  cpuVsBare?: RatioSummary;
  cpuVsSdk?: RatioSummary;
  cpuVsTmcp?: RatioSummary;
}

/** Each mount against the bare server on the same host, paired (issue 15: both ≥ 0.9). */
export interface HostRow {
  concurrency: number;
  /** mcp-mount ÷ bare node:http, req/s and (bare ÷ mount) server CPU per request. */
  node?: RatioSummary;
  nodeCpu?: RatioSummary;
  /** mcp-mount on Express ÷ bare Express, likewise. */
  express?: RatioSummary;
  expressCpu?: RatioSummary;
  /** mcp-mount on Express ÷ bare Express with req/res made dictionaries, req/s (when it ran). */
  expressDictionaries?: RatioSummary;
}

/** The host ratio a mount must reach. */
const HOST_TARGET = 0.9;

/** Concurrencies the targets apply to. */
const TARGET_CONCURRENCY = new Set([16, 64]);

type Metric = "rps" | "cpuPerRequest";

/** What pairing needs of a sample: which rep, concurrency and server (any id) it measured. */
export interface PairableSample {
  rep: number;
  concurrency: number;
  server: string;
  result: Pick<RunResult, Metric>;
}

/** Per-rep ratios of `numerator`'s metric to `denominator`'s at one concurrency, summarised. */
export function pairedRatios(
  samples: readonly PairableSample[],
  concurrency: number,
  numerator: string,
  denominator: string,
  metric: Metric = "rps",
): RatioSummary | undefined {
  const ratios: number[] = [];
  for (const top of samples) {
    if (top.concurrency !== concurrency || top.server !== numerator) continue;
    const bottom = samples.find(
      (s) => s.rep === top.rep && s.concurrency === concurrency && s.server === denominator,
    );
    const value = bottom && top.result[metric] / bottom.result[metric];
    if (value !== undefined && Number.isFinite(value)) ratios.push(value);
  }
  return ratios.length > 0 ? summarizeRatios(ratios) : undefined;
}

/** Reduces the samples to per-server medians and mcp-mount's paired ratios. */
export function summarize(samples: Sample[], concurrency: number[], servers: ContenderId[]) {
  const rows: ServerRow[] = [];
  const targets: TargetRow[] = [];
  const hosts: HostRow[] = [];
  for (const c of concurrency) {
    if (servers.includes("mcp-mount-express")) hosts.push(hostRow(samples, c));
    for (const server of servers) {
      const runs = samples.filter((s) => s.concurrency === c && s.server === server);
      const row: ServerRow = {
        concurrency: c,
        server,
        rps: median(runs.map((s) => s.result.rps)),
        p50: median(runs.map((s) => s.result.p50)),
        p99: median(runs.map((s) => s.result.p99)),
        cpuPerRequest: median(runs.map((s) => s.result.cpuPerRequest)),
      };
      const ofBare = pairedRatios(samples, c, server, "bare");
      if (ofBare) row.ofBare = ofBare;
      rows.push(row);
    }
    if (!servers.includes("mcp-mount")) continue;
    const target: TargetRow = { concurrency: c };
    const vsBare = pairedRatios(samples, c, "mcp-mount", "bare");
    const vsSdk = pairedRatios(samples, c, "mcp-mount", "sdk");
    const vsTmcp = pairedRatios(samples, c, "mcp-mount", "tmcp");
    if (vsBare) target.vsBare = vsBare;
    if (vsSdk) target.vsSdk = vsSdk;
    if (vsTmcp) target.vsTmcp = vsTmcp;
    const cpuVsBare = pairedRatios(samples, c, "bare", "mcp-mount", "cpuPerRequest");
    const cpuVsSdk = pairedRatios(samples, c, "sdk", "mcp-mount", "cpuPerRequest");
    const cpuVsTmcp = pairedRatios(samples, c, "tmcp", "mcp-mount", "cpuPerRequest");
    if (cpuVsBare) target.cpuVsBare = cpuVsBare;
    if (cpuVsSdk) target.cpuVsSdk = cpuVsSdk;
    if (cpuVsTmcp) target.cpuVsTmcp = cpuVsTmcp;
    if (TARGET_CONCURRENCY.has(c) && vsBare && vsSdk && vsTmcp) {
      target.met = vsBare.median >= 0.5 && vsSdk.median >= 3 && vsTmcp.median > 1;
    }
    targets.push(target);
  }
  return { rows, targets, hosts };
}

function hostRow(samples: Sample[], c: number): HostRow {
  const row: HostRow = { concurrency: c };
  const node = pairedRatios(samples, c, "mcp-mount", "bare");
  const nodeCpu = pairedRatios(samples, c, "bare", "mcp-mount", "cpuPerRequest");
  const express = pairedRatios(samples, c, "mcp-mount-express", "bare-express");
  const expressCpu = pairedRatios(samples, c, "bare-express", "mcp-mount-express", "cpuPerRequest");
  if (node) row.node = node;
  if (nodeCpu) row.nodeCpu = nodeCpu;
  if (express) row.express = express;
  if (expressCpu) row.expressCpu = expressCpu;
  const dictionaries = pairedRatios(samples, c, "mcp-mount-express", "bare-express-dictionaries");
  if (dictionaries) row.expressDictionaries = dictionaries;
  return row;
}

/** The mounts against their hosts' bare servers as a Markdown table. */
export function formatHostTable(hosts: HostRow[]): string[] {
  const met = (summary: RatioSummary | undefined) =>
    summary === undefined ? "—" : summary.median >= HOST_TARGET ? "met" : "MISSED";
  // The ceiling with dictionaries only when it ran (BENCH_SERVERS=…,bare-express-dictionaries).
  const dictionaries = hosts.some((row) => row.expressDictionaries !== undefined);
  const lines = [
    `| concurrency | req/s: mcp-mount ÷ bare node:http (≥ ${HOST_TARGET}) | on Express ÷ bare Express (≥ ${HOST_TARGET}) |${dictionaries ? " on Express ÷ bare Express, dictionaries |" : ""} CPU/req: bare node ÷ mount | bare Express ÷ mount | targets node / Express |`,
    `| ---: | ---: | ---: |${dictionaries ? " ---: |" : ""} ---: | ---: | --- |`,
  ];
  for (const row of hosts) {
    lines.push(
      `| ${row.concurrency} | ${ratio(row.node)} | ${ratio(row.express)} |${dictionaries ? ` ${ratio(row.expressDictionaries)} |` : ""} ${ratio(row.nodeCpu)} | ${ratio(row.expressCpu)} | ${met(row.node)} / ${met(row.express)} |`,
    );
  }
  return lines;
}

/** `value` with `digits` decimals, or "—" for NaN. */
export const fixed = (value: number, digits: number) =>
  Number.isNaN(value) ? "—" : value.toFixed(digits);

/** A ratio summary as "median (min–max)", or "—" when missing. */
export function ratio(summary: RatioSummary | undefined): string {
  if (!summary) return "—";
  return `${fixed(summary.median, 2)} (${fixed(summary.min, 2)}–${fixed(summary.max, 2)})`;
}

/** The per-server medians as a Markdown table. */
export function formatServerRows(rows: ServerRow[]): string[] {
  const lines = [
    "| concurrency | server | req/s | p50 ms | p99 ms | server CPU µs/req | req/s × bare (min–max) |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.concurrency} | ${CONTENDERS[row.server].label} | ${fixed(row.rps, 0)} | ${fixed(row.p50, 2)} | ${fixed(row.p99, 2)} | ${fixed(row.cpuPerRequest, 0)} | ${ratio(row.ofBare)} |`,
    );
  }
  return lines;
}

/** The summary as three Markdown tables, ready for RESULTS.md. */
export function formatTables(summary: ReturnType<typeof summarize>): string {
  const lines = formatServerRows(summary.rows);
  if (summary.hosts.length > 0) lines.push("", ...formatHostTable(summary.hosts));
  if (summary.targets.every((row) => row.vsSdk === undefined && row.vsTmcp === undefined)) {
    return lines.join("\n");
  }
  lines.push(
    "",
    "| concurrency | mcp-mount ÷ bare (target ≥ 0.5) | ÷ SDK v2 (≥ 3) | ÷ tmcp (> 1) | targets |",
    "| ---: | ---: | ---: | ---: | --- |",
  );
  for (const row of summary.targets) {
    const met = row.met === undefined ? "—" : row.met ? "met" : "MISSED";
    lines.push(
      `| ${row.concurrency} | ${ratio(row.vsBare)} | ${ratio(row.vsSdk)} | ${ratio(row.vsTmcp)} | ${met} |`,
    );
  }
  lines.push(
    "",
    "| concurrency | server CPU per request: bare ÷ mcp-mount | SDK v2 ÷ mcp-mount | tmcp ÷ mcp-mount |",
    "| ---: | ---: | ---: | ---: |",
  );
  for (const row of summary.targets) {
    lines.push(
      `| ${row.concurrency} | ${ratio(row.cpuVsBare)} | ${ratio(row.cpuVsSdk)} | ${ratio(row.cpuVsTmcp)} |`,
    );
  }
  return lines.join("\n");
}
