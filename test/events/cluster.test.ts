import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Cluster,
  type ClusterServer,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { assertEventsMessage } from "../helpers/events-schema.js";
import { type OpenStream, openEventStream } from "../helpers/events-server.js";
import { call, type Send, viaUrl } from "../helpers/modern.js";

const EVENTS_SERVER: ClusterServer = {
  script: fileURLToPath(new URL("../helpers/events-cluster-server.ts", import.meta.url)),
  listening: /^listening (\d+)$/m,
  env: { HEARTBEAT_MS: "500" },
};
const fetcher = (request: Request) => fetch(request);
/** Generous for a shared machine: every wait ends as soon as its condition holds. */
const WAIT_MS = 15_000;

async function emitOn(send: Send, id: string): Promise<{ pid: number; cursor: string }> {
  const exchange = await call(send, "tools/call", { name: "emit_event", arguments: { id } });
  return exchange.result.structuredContent as { pid: number; cursor: string };
}

/** The ids of the next `count` events on `stream` (heartbeats skipped), each checked. */
async function idsFrom(stream: OpenStream, count: number): Promise<string[]> {
  const ids: string[] = [];
  const deadline = Date.now() + WAIT_MS;
  while (ids.length < count && Date.now() < deadline) {
    const message = await stream.next(Math.max(1, deadline - Date.now()));
    if (!message) break;
    if (message.method === "notifications/events/event")
      ids.push((message.params as { data: { id: string } }).data.id);
  }
  return ids;
}

/** Polls through `send` (the proxy: each poll to the next process) until `count` ids came. */
async function pollIds(send: Send, cursor: unknown, count: number): Promise<string[]> {
  const ids: string[] = [];
  let at = cursor;
  await expect
    .poll(
      async () => {
        const exchange = await call(send, "events/poll", {
          name: "note.created",
          cursor: at,
          maxEvents: 4,
        });
        assertEventsMessage(exchange.response, "events/poll");
        expect(exchange.result.truncated).toBe(false);
        ids.push(...(exchange.result.events as { data: { id: string } }[]).map((o) => o.data.id));
        at = exchange.result.cursor;
        return ids.length;
      },
      { timeout: WAIT_MS, interval: 50 },
    )
    .toBeGreaterThanOrEqual(count);
  return ids;
}

// Events through three processes behind the round-robin proxy, on one Redis node and on a
// three-master Redis Cluster: occurrences emitted on every process reach poll and push
// subscribers held by the others, in one order, none lost or doubled.
describe.each<RedisTopology>(["standalone", "cluster"])(
  "events across three processes (Redis store, %s)",
  (topology) => {
    let cluster: Cluster;
    let on: Send[];
    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, topology, server: EVENTS_SERVER });
      on = cluster.backends.map((backend) => viaUrl(backend.url));
    }, 90_000);
    afterAll(() => cluster?.stop());

    it("should deliver what every process emits to push and poll subscribers on the others", async () => {
      const streams: OpenStream[] = [];
      for (let i = 0; i < 3; i++)
        streams.push(await openEventStream(fetcher, cluster.url, { name: "note.created" }));
      try {
        // Round robin: one stream held by each process.
        expect(new Set(streams.map(servedBy))).toEqual(new Set([0, 1, 2]));
        for (const stream of streams)
          expect((await stream.next())?.method).toBe("notifications/events/active");
        const proxy = viaUrl(cluster.url);
        const start = await call(proxy, "events/poll", { name: "note.created" });
        // Emitted concurrently on all three, four rounds: the feed orders them once for all.
        const emitted: string[] = [];
        for (let round = 0; round < 4; round++) {
          const ids = on.map((_, process) => `r${round}-p${process}`);
          emitted.push(...ids);
          await Promise.all(ids.map((id, process) => emitOn(on[process]!, id)));
        }
        const seen = await Promise.all(streams.map((stream) => idsFrom(stream, emitted.length)));
        expect([...seen[0]!].sort()).toEqual([...emitted].sort());
        expect(seen[1]).toEqual(seen[0]);
        expect(seen[2]).toEqual(seen[0]);
        expect(await pollIds(proxy, start.result.cursor, emitted.length)).toEqual(seen[0]);
        // Nothing more comes: none was doubled (a heartbeat, not an event, is next).
        expect((await streams[0]!.next(WAIT_MS))?.method).toBe("notifications/events/heartbeat");
      } finally {
        for (const stream of streams) await stream.cancel();
      }
    }, 60_000);

    it("should resume a stream on another process from the cursor it had, losing nothing", async () => {
      const first = await openEventStream(fetcher, cluster.backends[0]!.url, {
        name: "note.created",
      });
      expect((await first.next())?.method).toBe("notifications/events/active");
      await emitOn(on[1]!, "before-drop");
      let cursor: unknown;
      for (let message = await first.next(); message; message = await first.next()) {
        if (message.method !== "notifications/events/event") continue;
        cursor = (message.params as { cursor: string }).cursor;
        break;
      }
      await first.cancel();
      await emitOn(on[1]!, "while-away-1");
      await emitOn(on[0]!, "while-away-2");
      const second = await openEventStream(fetcher, cluster.backends[2]!.url, {
        name: "note.created",
        cursor,
      });
      try {
        expect((await second.next())?.params).toMatchObject({ truncated: false });
        await emitOn(on[2]!, "after");
        expect(await idsFrom(second, 3)).toEqual(["while-away-1", "while-away-2", "after"]);
      } finally {
        await second.cancel();
      }
    }, 60_000);
  },
);
