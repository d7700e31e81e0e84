import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import {
  type Cluster,
  openStream,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { EVERYTHING_ELICITED, EVERYTHING_SAMPLED } from "../helpers/gateway-everything.js";
import { gatewayServer } from "../helpers/gateway-process.js";
import { legacyHeaders, openSession } from "../helpers/legacy.js";
import { call, type Exchange, type Send, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import type { SseReader } from "../helpers/stream.js";

// Three gateway processes (test/helpers/gateway-server.ts) on one Redis, behind the
// round-robin proxy of test/helpers/cluster.ts, which sends each request to the next process
// and names it in x-cluster-backend: every round of a call may land on another process than
// the one whose upstream child is running the call.

/** Generous waits: these suites share a loaded machine with every other suite. */
const WAIT_MS = 10_000;
const ELICITATION = { capabilities: { elicitation: { form: {} } } };
const TRIGGER = { name: "trigger-elicitation-request", arguments: {} };

/** The one input request of an input_required round: its key and method. */
function onlyInput(exchange: Exchange): { key: string; method: string } {
  expect(exchange.result.resultType, JSON.stringify(exchange.response)).toBe("input_required");
  const entries = Object.entries(
    exchange.result.inputRequests as Record<string, { method: string }>,
  );
  expect(entries).toHaveLength(1);
  const [key, request] = entries[0]!;
  return { key, method: request.method };
}

async function next(reader: SseReader, method = "") {
  const message = await reader.next(WAIT_MS);
  if (message) assertLegacyMessage(message, method);
  return message;
}

describe.each<RedisTopology>(["standalone", "cluster"])(
  "three gateways on server-everything (Redis %s, round-robin proxy)",
  (topology) => {
    let cluster: Cluster;
    let proxy: Send;

    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, server: gatewayServer("everything"), topology });
      proxy = viaUrl(cluster.url);
    }, 120_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it("should finish a modern elicitation answered on another process than the one holding the upstream call", async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const first = await call(proxy, "tools/call", TRIGGER, ELICITATION);
        const input = onlyInput(first);
        expect(input.method).toBe("elicitation/create");
        const second = await call(
          proxy,
          "tools/call",
          {
            ...TRIGGER,
            inputResponses: { [input.key]: { action: "accept", content: EVERYTHING_ELICITED } },
            requestState: first.result.requestState,
          },
          ELICITATION,
        );
        // The first round's process holds the upstream call; the answer reached another one.
        expect(servedBy(second)).not.toBe(servedBy(first));
        expect(second.result.resultType, JSON.stringify(second.response)).toBe("complete");
        expect(JSON.stringify(second.result.content)).toContain("- Name: Ada Lovelace");
      }
    });

    it("should finish a modern sampling round and a declined elicitation through our client", async () => {
      const client = await McpClient.connect(cluster.url, {
        era: "modern",
        onInput: {
          elicitation: () => ({ action: "decline" }),
          sampling: () => EVERYTHING_SAMPLED,
        },
      });
      const declined = await client.callTool("trigger-elicitation-request", {});
      expect(JSON.stringify(declined.content)).toContain("declined");
      const sampled = await client.callTool("trigger-sampling-request", { prompt: "p" });
      expect(JSON.stringify(sampled.content)).toContain("from the test's model");
      await client.close();
    });

    it("should resolve a legacy session's elicitation whose answer is posted to another process", async () => {
      const session = await openSession(proxy, { elicitation: {} });
      const pending = await openStream(cluster.url, {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "elicit-1",
          method: "tools/call",
          params: TRIGGER,
        }),
      });
      const request = await next(pending.reader, "tools/call");
      expect(request).toMatchObject({ method: "elicitation/create" });
      const answer = await proxy({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: request?.id,
          result: { action: "accept", content: EVERYTHING_ELICITED },
        }),
      });
      expect(answer.status).toBe(202);
      expect(servedBy(answer)).not.toBe(servedBy(pending.response));
      const result = await next(pending.reader, "tools/call");
      expect(result).toMatchObject({ id: "elicit-1", result: { content: expect.any(Array) } });
      expect(JSON.stringify(result)).toContain("- Name: Ada Lovelace");
    });
  },
);

describe("three gateways on our test upstream (Redis standalone, round-robin proxy)", () => {
  let cluster: Cluster;
  let proxy: Send;

  beforeAll(async () => {
    cluster = await startCluster({ processes: 3, server: gatewayServer("test") });
    proxy = viaUrl(cluster.url);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  /** The pid of the upstream child each gateway process runs, asked of each directly. */
  async function childPids(): Promise<number[]> {
    return Promise.all(
      cluster.backends.map(async (backend) => {
        const answer = await call(viaUrl(backend.url), "tools/call", {
          name: "pid",
          arguments: {},
        });
        return (answer.result.structuredContent as { pid: number }).pid;
      }),
    );
  }

  it("should finish a modern call in the child of the process that started it, whichever process gets the answer", async () => {
    const pids = await childPids();
    expect(new Set(pids).size).toBe(3);
    const params = { name: "ask_pid", arguments: {} };
    const first = await call(proxy, "tools/call", params, ELICITATION);
    const input = onlyInput(first);
    const second = await call(
      proxy,
      "tools/call",
      {
        ...params,
        inputResponses: { [input.key]: { action: "accept", content: { ok: true } } },
        requestState: first.result.requestState,
      },
      ELICITATION,
    );
    const holder = servedBy(first);
    expect(servedBy(second)).not.toBe(holder);
    // The upstream call that got the answer is the one the first round's process started: a
    // gateway that ran the call again where the retry landed would answer with another pid.
    expect(second.result.structuredContent).toEqual({
      pid: pids[holder],
      action: "accept",
      content: { ok: true },
    });
  });

  it("should fail a call in flight with a retryable error when the child dies, restart it and serve the next call", async () => {
    // One process of the fleet, reached without the proxy: its own child is the one that dies.
    const backend = viaUrl(cluster.backends[1]!.url);
    const before = await call(backend, "tools/call", { name: "pid", arguments: {} });
    const oldPid = (before.result.structuredContent as { pid: number }).pid;
    const crashed = await call(backend, "tools/call", { name: "crash", arguments: {} });
    expect(crashed.error).toMatchObject({ code: -32603, data: { retryable: true } });
    // The next call waits for the restart rather than failing: it is served by a new child.
    const restarted = await call(backend, "tools/call", { name: "pid", arguments: {} });
    const newPid = (restarted.result.structuredContent as { pid: number }).pid;
    expect(newPid).toEqual(expect.any(Number));
    expect(newPid).not.toBe(oldPid);
    const after = await call(backend, "tools/call", { name: "echo", arguments: { text: "back" } });
    expect(after.result.content).toEqual([{ type: "text", text: "back" }]);
  });

  it("should give a legacy client the retryable error too, and serve its next call", async () => {
    const client = await McpClient.connect(cluster.url, { era: "legacy" });
    const crashed = client.callTool("crash", {});
    await expect(crashed).rejects.toMatchObject({ code: -32603, data: { retryable: true } });
    // Whichever process the proxy picks next, the call is served (the crashed child's process
    // waits for its restart).
    for (let i = 0; i < 3; i++) {
      const echoed = await client.callTool("echo", { text: `again ${i}` });
      expect(echoed.content).toEqual([{ type: "text", text: `again ${i}` }]);
    }
    await client.close();
  });
});
