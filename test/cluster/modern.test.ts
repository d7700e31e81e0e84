import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Cluster,
  openStream,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import {
  call,
  type Exchange,
  modernHeaders,
  modernMeta,
  type Send,
  viaUrl,
} from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import { assertModernMessage } from "../helpers/spec.js";
import type { SseReader } from "../helpers/stream.js";

const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";
const ELICITATION = { capabilities: { elicitation: {} } };
/** Generous waits: these suites share a loaded machine with every other suite. */
const WAIT_MS = 10_000;

/** Opens a `subscriptions/listen` stream at `url` and reads its acknowledgement. */
async function listen(url: string, id: string) {
  const { response, reader } = await openStream(url, {
    method: "POST",
    headers: modernHeaders("subscriptions/listen"),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
    }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const ack = await next(reader);
  expect(ack?.method).toBe("notifications/subscriptions/acknowledged");
  return { reader, response };
}

async function next(reader: SseReader) {
  const message = await reader.next(WAIT_MS);
  if (message) assertModernMessage(message, "subscriptions/listen");
  return message;
}

function listChanged(id: string) {
  return {
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
    params: { _meta: { [SUBSCRIPTION]: id } },
  };
}

describe.each<RedisTopology>(["standalone", "cluster"])(
  "the modern era across processes (Redis store, %s, round-robin proxy)",
  (topology) => {
    let cluster: Cluster;
    /** Sends through the proxy. */
    let proxy: Send;

    /** Round 1 of the `confirm` tool: an input_required result with a sealed requestState. */
    async function firstRound(item: string): Promise<Exchange> {
      const first = await call(
        proxy,
        "tools/call",
        { name: "confirm", arguments: { item } },
        ELICITATION,
      );
      expect(first.result.resultType).toBe("input_required");
      return first;
    }

    function secondRound(item: string, requestState: unknown) {
      return {
        name: "confirm",
        arguments: { item },
        inputResponses: { confirm: { action: "accept", content: { ok: true } } },
        requestState,
      };
    }

    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, topology });
      proxy = viaUrl(cluster.url);
    }, 90_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it("should spread 30 tools/call over every backend, each answered correctly", async () => {
      const before = cluster.proxyLog.length;
      const exchanges = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call(proxy, "tools/call", { name: "typed", arguments: { a: i } }),
        ),
      );
      exchanges.forEach((exchange, i) => {
        expect(exchange.status).toBe(200);
        expect(exchange.result.structuredContent).toEqual({ double: i * 2 });
      });
      const served = exchanges.map(servedBy);
      expect(new Set(served)).toEqual(new Set([0, 1, 2]));
      const logged = cluster.proxyLog.slice(before).map((entry) => entry.backend);
      expect(logged.sort()).toEqual([...served].sort());
    });

    it("should route to distinct processes", async () => {
      const pids = new Map<number, unknown>();
      for (let i = 0; i < 3; i++) {
        const exchange = await call(proxy, "tools/call", { name: "whoami", arguments: {} });
        pids.set(servedBy(exchange), (exchange.result.structuredContent as { pid: number }).pid);
      }
      for (const backend of cluster.backends) expect(pids.get(backend.index)).toBe(backend.pid);
    });

    it("should complete an elicitation whose second round lands on another backend", async () => {
      const first = await firstRound("a");
      const second = await call(
        proxy,
        "tools/call",
        secondRound("a", first.result.requestState),
        ELICITATION,
      );
      expect(servedBy(second)).not.toBe(servedBy(first));
      expect(second.result).toMatchObject({
        resultType: "complete",
        structuredContent: { action: "accept", content: { ok: true }, rounds: 2 },
      });
    });

    it("should deliver a list change made on one backend to the listen streams every backend holds", async () => {
      const streams = [
        await listen(cluster.url, "l0"),
        await listen(cluster.url, "l1"),
        await listen(cluster.url, "l2"),
      ];
      try {
        expect(new Set(streams.map(({ response }) => servedBy(response)))).toEqual(
          new Set([0, 1, 2]),
        );
        const notified = await call(proxy, "tools/call", {
          name: "notify_tools_changed",
          arguments: {},
        });
        expect(notified.result.content).toEqual([{ type: "text", text: "notified" }]);
        for (const [i, { reader }] of streams.entries()) {
          expect(await next(reader)).toEqual(listChanged(`l${i}`));
        }
        // Published once, delivered once by each process: time for a second copy to arrive, had one been sent.
        await sleep(200);
        expect(streams.map(({ reader }) => reader.pending)).toEqual([0, 0, 0]);
      } finally {
        await Promise.all(streams.map(({ reader }) => reader.cancel()));
      }
    });

    it("should refuse a single-use requestState replayed on another backend", async () => {
      const first = await firstRound("b");
      const params = secondRound("b", first.result.requestState);
      const accepted = await call(proxy, "tools/call", params, ELICITATION);
      expect(accepted.result.resultType).toBe("complete");
      const replayed = await call(proxy, "tools/call", params, ELICITATION);
      expect(servedBy(replayed)).not.toBe(servedBy(accepted));
      expect(replayed.error?.code).toBe(-32602);
    });

    it("should accept a single-use requestState once when every backend redeems it at once", async () => {
      const first = await firstRound("c");
      const params = secondRound("c", first.result.requestState);
      const exchanges = await Promise.all(
        cluster.backends.map((backend) =>
          call(viaUrl(backend.url), "tools/call", params, ELICITATION),
        ),
      );
      const outcomes = exchanges.map(
        (exchange) => exchange.error?.code ?? exchange.result.resultType,
      );
      expect(outcomes.sort()).toEqual([-32602, -32602, "complete"]);
    });

    it("should keep answering through the proxy when a backend dies, and take it back on restart", async () => {
      const victim = cluster.backends[1]!;
      const streams = [
        await listen(cluster.url, "k0"),
        await listen(cluster.url, "k1"),
        await listen(cluster.url, "k2"),
      ];
      const survivors = streams.filter(({ response }) => servedBy(response) !== victim.index);
      const orphaned = streams.find(({ response }) => servedBy(response) === victim.index)!;
      try {
        const served: number[] = [];
        for (let i = 0; i < 12; i++) {
          if (i === 4) await victim.kill();
          const exchange = await call(proxy, "tools/call", { name: "typed", arguments: { a: i } });
          expect(exchange.result.structuredContent).toEqual({ double: i * 2 });
          served.push(servedBy(exchange));
        }
        expect(served.slice(4)).not.toContain(victim.index);
        expect(new Set(served.slice(4)).size).toBe(2);
        await expect(fetch(victim.url, { method: "POST" })).rejects.toThrow();
        // The killed process's stream ends; the others still hear changes made elsewhere.
        await orphaned.reader.done;
        expect(orphaned.reader.ended).toBe(true);
        await call(proxy, "tools/call", { name: "notify_tools_changed", arguments: {} });
        for (const { reader } of survivors) {
          expect((await next(reader))?.method).toBe("notifications/tools/list_changed");
        }

        await victim.restart();
        const back = await Promise.all(
          [0, 1, 2].map(() => call(proxy, "tools/call", { name: "whoami", arguments: {} })),
        );
        expect(back.map(servedBy).sort()).toEqual([0, 1, 2]);
        const revived = await listen(victim.url, "revived");
        await call(proxy, "tools/call", { name: "notify_tools_changed", arguments: {} });
        expect(await next(revived.reader)).toEqual(listChanged("revived"));
        await revived.reader.cancel();
      } finally {
        await Promise.all(streams.map(({ reader }) => reader.cancel()));
      }
    });
  },
);
