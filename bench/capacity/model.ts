// The capacity model: what N processes and one Redis node (or a Redis Cluster's masters) carry,
// from unit costs measured on one process. Every ceiling is a resource's capacity divided by
// what one unit of work takes of it; the smallest ceiling is the prediction. Linear on purpose:
// it ignores batching (Redis and the kernel get cheaper per command under load) and contention
// (processes sharing cores get dearer), which the check against a measured run shows.

/** What one request costs, medians over reps. */
export interface RequestCost {
  /** Server CPU, µs per request (all server processes). */
  serverMicros: number;
  /** Load generator CPU, µs per request (this process). */
  generatorMicros: number;
  /** Redis CPU, µs per request. */
  redisMicros: number;
  /** Redis calls per request. */
  redisCommands: number;
  /** HTTP/1.1 bytes of the request and of its response. */
  requestBytes: number;
  responseBytes: number;
}

/** Where the work runs: app processes and cores, Redis masters, and the link between. */
export interface Deployment {
  processes: number;
  /** Cores for the app processes; a Node process uses about one. */
  cores: number;
  /** Redis masters: 1 for one node; a Cluster's masters split per-session keys by hash slot. */
  redisMasters: number;
  /** Bytes per second the app hosts' network carries each way. */
  linkBytesPerSecond: number;
}

/** Below this many Redis calls per request, Redis CPU per request is its own housekeeping spread thin. */
const REDIS_WORK = 0.01;

/** Each resource's ceiling in requests per second, and the binding one. */
export interface RequestCeilings {
  app: number;
  /** Infinity when requests cost Redis no command. */
  redis: number;
  link: number;
  carried: number;
  bound: "app CPU" | "Redis CPU" | "link";
}

/** requests/s = min(min(N, C) × 1e6 ÷ server µs, masters × 1e6 ÷ Redis µs, link ÷ bytes). */
export function requestCeilings(cost: RequestCost, at: Deployment): RequestCeilings {
  const app = (Math.min(at.processes, at.cores) * 1e6) / cost.serverMicros;
  const redis =
    cost.redisCommands >= REDIS_WORK
      ? (at.redisMasters * 1e6) / cost.redisMicros
      : Number.POSITIVE_INFINITY;
  const link = at.linkBytesPerSecond / Math.max(cost.requestBytes, cost.responseBytes);
  const carried = Math.min(app, redis, link);
  const bound = carried === app ? "app CPU" : carried === redis ? "Redis CPU" : "link";
  return { app, redis, link, carried, bound };
}

/**
 * The ceiling on a machine whose `cores` run the servers, Redis and the load generator alike:
 * every request takes server, generator and Redis CPU from the same pool.
 */
export function sameMachineCeiling(cost: RequestCost, cores: number): number {
  return (cores * 1e6) / (cost.serverMicros + cost.generatorMicros + cost.redisMicros);
}

/** What an idle stream holds, bytes: in the server process and in Redis. */
export interface StreamCost {
  /** Heap and external memory per stream after GC. */
  heap: number;
  /** RSS growth per stream (noisier: pages, allocator). */
  rss: number;
  /** Redis `used_memory` growth per stream (a legacy stream: its session too). */
  redis: number;
}

/** Open streams one process holds within `budgetBytes` of memory, and Redis within its own. */
export function streamCeilings(
  cost: StreamCost,
  processBudgetBytes: number,
  redisBudgetBytes: number,
): { perProcess: number; redis: number } {
  return {
    perProcess: processBudgetBytes / Math.max(cost.heap, cost.rss),
    redis: cost.redis > 0 ? redisBudgetBytes / cost.redis : Number.POSITIVE_INFINITY,
  };
}

/** CPU one list change costs, µs: a fixed part per process that hears it, and a part per stream. */
export interface ChangeCost {
  /** Server CPU per change per process, with no streams (the trigger's tools/call included). */
  serverPerProcess: number;
  /** Server CPU per change per stream beyond that: the event written to it. */
  serverPerStream: number;
  /** Redis CPU per change per subscribed process, with no streams (the PUBLISH). */
  redisPerProcess: number;
  /** Redis CPU per change per stream beyond that (a legacy stream's replay-log append). */
  redisPerStream: number;
}

/**
 * Changes per second `streams` streams spread over the deployment can hear:
 * app = min(N, C) × 1e6 ÷ (N × server per process + S × server per stream),
 * Redis = 1e6 ÷ (N × Redis per process + S × Redis per stream ÷ masters). A Cluster splits the
 * per-stream appends (keys of each session's slot) over its masters but not the PUBLISH: a
 * fleet-wide message reaches every node and, from each, its subscribers.
 */
export function changeCeilings(
  cost: ChangeCost,
  at: Deployment,
  streams: number,
): { app: number; redis: number } {
  const app =
    (Math.min(at.processes, at.cores) * 1e6) /
    (at.processes * cost.serverPerProcess + streams * cost.serverPerStream);
  const redis =
    1e6 / (at.processes * cost.redisPerProcess + (streams * cost.redisPerStream) / at.redisMasters);
  return { app, redis };
}
