import { fixed } from "../report.js";
import {
  type ChangeCost,
  changeCeilings,
  type Deployment,
  requestCeilings,
  streamCeilings,
} from "./model.js";
import { checkTable, requestCost, unitTable } from "./report-requests.js";
import { changeCost, changeTable, streamCosts, streamTable } from "./report-streams.js";
import { type CapacityRun, type Era, whole } from "./run.js";

// The capacity benchmark's tables: unit costs, the check of the model against the measured
// N-process run, and what the model gives for a few deployments.

/** The model applied to a few deployments, from the highest concurrency's costs. */
function deploymentTable(run: CapacityRun): string[] {
  const c = Math.max(...run.concurrency);
  const S = 10_000;
  const lines = [
    `| processes (1 core each) | Redis | modern req/s (bound) | legacy req/s (bound) | changes/s heard by ${whole(S)} listen streams | by ${whole(S)} legacy GET streams | listen streams in the RSS budget |`,
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  const listen = changeCost(run, "listen");
  const get = changeCost(run, "get");
  const streams = streamCosts(run);
  for (const processes of [1, 6, 24]) {
    for (const redisMasters of processes === 1 ? [1] : [1, 3]) {
      const at: Deployment = {
        processes,
        cores: processes,
        redisMasters,
        linkBytesPerSecond: run.linkBytesPerSecond,
      };
      const req = (era: Era) => {
        const ceilings = requestCeilings(requestCost(run, era, c), at);
        return `${whole(ceilings.carried)} (${ceilings.bound})`;
      };
      const changes = (cost: ChangeCost) => {
        const { app, redis } = changeCeilings(cost, at, S);
        return `${fixed(Math.min(app, redis), 0)} (${app <= redis ? "app CPU" : "Redis CPU"})`;
      };
      const held = streamCeilings(streams.listen, run.processBudgetBytes, run.redisBudgetBytes);
      lines.push(
        `| ${processes} | ${redisMasters === 1 ? "one node" : `Cluster, ${redisMasters} masters`} | ${req("modern")} | ${req("legacy")} | ${changes(listen)} | ${changes(get)} | ${whole(processes * held.perProcess)} |`,
      );
    }
  }
  return lines;
}

/** Every table, as Markdown lines. */
export function formatCapacity(run: CapacityRun): string[] {
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(" ");
  return [
    `${run.machine}; load ${load(run.loadBefore)} before, ${load(run.loadAfter)} after; medians (min–max) over reps`,
    "",
    "Per request, one Redis-backed process (CPU of all processes counted):",
    "",
    ...unitTable(run),
    "",
    `Check: ${run.processes} processes on one Redis, client-side round-robin, against the model on this machine:`,
    "",
    ...checkTable(run),
    "",
    "Per idle stream, one Redis-backed process:",
    "",
    ...streamTable(run),
    "",
    "Per list change:",
    "",
    ...changeTable(run),
    "",
    `The model for other deployments (costs at c = ${Math.max(...run.concurrency)}; link ${whole(run.linkBytesPerSecond / 1e6)} MB/s each way; Cluster: per-session Redis work split over masters, a change's PUBLISH not):`,
    "",
    ...deploymentTable(run),
  ];
}
