import { fixed } from "../report.js";
import { median } from "../stats.js";
import type { ChangeBatch } from "./changes.js";
import { type ChangeCost, type StreamCost, streamCeilings } from "./model.js";
import { type CapacityRun, spread, whole } from "./run.js";
import type { StreamKind } from "./sse.js";
import type { MemoryRound } from "./streams.js";

// The per-stream and per-change tables, and the medians the model takes from them.

/** Per-stream memory, medians over rounds; a legacy stream carries its session's cost too. */
export function streamCosts(run: CapacityRun): Record<StreamKind, StreamCost> {
  const mid = (pick: (r: MemoryRound) => number) => median(run.memory.map(pick));
  return {
    listen: {
      heap: mid((r) => r.listen.heap + r.listen.external),
      rss: mid((r) => r.listen.rss),
      redis: mid((r) => r.listen.redis),
    },
    get: {
      heap: mid((r) => r.get.heap + r.get.external + r.session.heap + r.session.external),
      rss: mid((r) => r.get.rss + r.session.rss),
      redis: mid((r) => r.get.redis + r.session.redis),
    },
  };
}

/** Memory per idle stream, and the streams a budget holds. */
export function streamTable(run: CapacityRun): string[] {
  const lines = [
    `| per idle stream (${run.memory.length} rounds) | heap + external | RSS | in Redis | streams per process in ${whole(run.processBudgetBytes / 2 ** 20)} MiB | streams in ${whole(run.redisBudgetBytes / 2 ** 20)} MiB of Redis |`,
    "| --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  const rows = [
    ["modern `subscriptions/listen`", (r: MemoryRound) => r.listen],
    ["legacy GET stream alone", (r: MemoryRound) => r.get],
    ["legacy session alone (idle, no stream)", (r: MemoryRound) => r.session],
  ] as const;
  for (const [name, pick] of rows) {
    const col = (f: (c: ReturnType<typeof pick>) => number) =>
      spread(
        run.memory.map((r) => f(pick(r))),
        0,
      );
    lines.push(
      `| ${name} | ${col((c) => c.heap + c.external)} | ${col((c) => c.rss)} | ${col((c) => c.redis)} | | |`,
    );
  }
  const costs = streamCosts(run);
  for (const [kind, name] of [
    ["listen", "model: listen stream"],
    ["get", "model: legacy session + GET stream"],
  ] as const) {
    const cost = costs[kind];
    const ceiling = streamCeilings(cost, run.processBudgetBytes, run.redisBudgetBytes);
    lines.push(
      `| ${name} | ${fixed(cost.heap, 0)} | ${fixed(cost.rss, 0)} | ${fixed(cost.redis, 0)} | ${whole(ceiling.perProcess)} | ${whole(ceiling.redis)} |`,
    );
  }
  return lines;
}

const perChange = (micros: (b: ChangeBatch) => number) => (b: ChangeBatch) => micros(b) / b.changes;
const server = perChange((b) => b.serverMicros);
const redis = perChange((b) => b.redisMicros);

/** Per stream, each batch's cost per change beyond the median change heard by no stream. */
function beyond(run: CapacityRun, kind: StreamKind, cost: (b: ChangeBatch) => number): number[] {
  const fixedPart = median(run.changes.none.map(cost));
  return run.changes[kind].map((b) => Math.max(0, (cost(b) - fixedPart) / b.streams));
}

/** CPU per change, medians over batches: the fixed part per process, and the part per stream. */
export function changeCost(run: CapacityRun, kind: StreamKind): ChangeCost {
  return {
    serverPerProcess: median(run.changes.none.map(server)) / run.processes,
    serverPerStream: median(beyond(run, kind, server)),
    redisPerProcess: median(run.changes.none.map(redis)) / run.processes,
    redisPerStream: median(beyond(run, kind, redis)),
  };
}

/** CPU per list change: with no stream, and per stream beyond that. */
export function changeTable(run: CapacityRun): string[] {
  const lines = [
    `| streams over ${run.processes} processes | batches × changes | server CPU µs per change | beyond no streams, per stream | Redis CPU µs per change | beyond no streams, per stream | reader CPU µs per change per stream | Redis calls per change |`,
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const [kind, name] of [
    ["none", "none"],
    ["listen", "listen"],
    ["get", "legacy GET"],
  ] as const) {
    const batches = run.changes[kind];
    const first = batches[0];
    if (!first) continue;
    const col = (pick: (b: ChangeBatch) => number, digits: number) =>
      spread(batches.map(pick), digits);
    const calls = Object.entries(first.redisCommands)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([command, count]) => `${command} ${fixed(count / first.changes, 1)}`)
      .join(", ");
    const perStream = (cost: (b: ChangeBatch) => number, digits: number) =>
      kind === "none" ? "—" : spread(beyond(run, kind, cost), digits);
    const reader = kind === "none" ? "—" : col((b) => b.readerMicros / (b.changes * b.streams), 1);
    lines.push(
      `| ${first.streams} ${name} | ${batches.length} × ${first.changes} | ${col(server, 0)} | ${perStream(server, 1)} | ${col(redis, 0)} | ${perStream(redis, 2)} | ${reader} | ${calls || "none"} |`,
    );
  }
  return lines;
}
