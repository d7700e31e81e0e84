import type { IncomingMessage } from "node:http";
import { Pool } from "undici";
import type { Cluster } from "../../test/helpers/cluster.js";
import { MCP_PATH, REQUEST_HEADERS } from "../request.js";
import { cpuMicrosOf, type RedisCounters } from "../scale-cluster.js";
import { legacyWorkload } from "../workload.js";
import { closeAll, openAll, openGet, openListen, type StreamKind } from "./sse.js";

// Cost per list change for the capacity model, from bench/fanout.ts's pieces at a small scale:
// `streams` streams of one kind spread evenly over the cluster's processes (a legacy session
// opened on one process has its GET stream on the next), then tools list changes, each
// triggered by a `tools/call notify_tools_changed` on the next process in turn and sent once
// every stream heard the one before; without streams, one after another. CPU is read over a batch of changes, not one: /proc counts
// in 10 ms ticks, more than one change costs a process here.

/** What one batch of changes cost in all: the servers, Redis and this reader. */
export interface ChangeBatch {
  changes: number;
  streams: number;
  serverMicros: number;
  redisMicros: number;
  readerMicros: number;
  redisCommands: Record<string, number>;
  wallMs: number;
}

const CHANGE = "notifications/tools/list_changed";
/** Longest wait for every stream to hear one change. */
const DELIVERY_TIMEOUT_MS = 30_000;
/** After a batch's last arrival: the servers' own part of it may still run. */
const SETTLE_MS = 200;

const notifyBody = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: "notify_tools_changed",
      arguments: {},
      _meta: {
        "io.modelcontextprotocol/protocolVersion": REQUEST_HEADERS["mcp-protocol-version"],
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });

async function notify(pool: Pool, id: number): Promise<void> {
  const headers = { ...REQUEST_HEADERS, "mcp-name": "notify_tools_changed" };
  const response = await pool.request({
    path: MCP_PATH,
    method: "POST",
    headers,
    body: notifyBody(id),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 || !text.includes('"notified"')) {
    throw new Error(`notify_tools_changed: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
  }
}

const ownMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** Unmeasured changes first: the delivery code runs cold in every process at the start. */
const WARM_CHANGES = 5;

/**
 * Opens `streams` streams of `kind` over `cluster`, runs {@link WARM_CHANGES} unmeasured changes,
 * then `batches` × `perBatch` timed ones. With no streams, a change's fixed cost: the trigger's
 * tools/call, the PUBLISH, and every process hearing it.
 */
export async function measureChanges(
  cluster: Cluster,
  redis: RedisCounters,
  kind: StreamKind,
  streams: number,
  perBatch: number,
  batches: number,
): Promise<ChangeBatch[]> {
  const n = cluster.backends.length;
  const ports = cluster.backends.map((backend) => Number(new URL(backend.url).port));
  const pids = cluster.backends.map((backend) => backend.pid);
  const pools = cluster.backends.map((backend) => new Pool(new URL(backend.url).origin));
  let heard = 0;
  let target = Number.POSITIVE_INFINITY;
  let arrived = () => {};
  const onEvent = (event: string) => {
    if (event.includes(CHANGE) && ++heard >= target) arrived();
  };
  let open: IncomingMessage[] = [];
  let id = 0;
  const change = async () => {
    if (streams === 0) return notify(pools[id % n]!, id++);
    target = heard + streams;
    const all = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${heard}/${target} heard`)), DELIVERY_TIMEOUT_MS);
    });
    await notify(pools[id % n]!, id++);
    await Promise.race([all, late]).finally(() => clearTimeout(timer));
  };
  try {
    open =
      kind === "listen"
        ? await openAll(streams, (i) => openListen(ports[i % n]!, i, onEvent))
        : await openAll(streams, async (i) => {
            const slot = await legacyWorkload.open(pools[i % n]!);
            return openGet(ports[(i + 1) % n]!, slot.headers["mcp-session-id"]!, onEvent);
          });
    for (let k = 0; k < WARM_CHANGES; k++) await change();
    const results: ChangeBatch[] = [];
    for (let batch = 0; batch < batches; batch++) {
      await redis.reset();
      const serverBefore = cpuMicrosOf(pids);
      const readerBefore = ownMicros();
      const started = performance.now();
      for (let k = 0; k < perBatch; k++) await change();
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const counts = await redis.read();
      results.push({
        changes: perBatch,
        streams,
        serverMicros: cpuMicrosOf(pids) - serverBefore,
        redisMicros: counts.cpuMicros,
        readerMicros: ownMicros() - readerBefore,
        redisCommands: counts.commands,
        wallMs: performance.now() - started,
      });
    }
    return results;
  } finally {
    await closeAll(open);
    await Promise.all(pools.map((pool) => pool.close()));
  }
}
