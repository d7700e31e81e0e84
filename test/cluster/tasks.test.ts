import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Cluster, type RedisTopology, startCluster } from "../helpers/cluster.js";
import { call, type Exchange, type Send, viaUrl } from "../helpers/modern.js";

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} }, elicitation: {} };
/** Generous: the lease (1.5 s) must lapse, on a machine shared with other suites. */
const WAIT_MS = 15_000;

function tool(send: Send, name: string, args: Record<string, unknown> = {}): Promise<Exchange> {
  return call(send, "tools/call", { name, arguments: args }, { capabilities: TASKS });
}

function task(send: Send, method: string, taskId: string, params: Record<string, unknown> = {}) {
  return call(
    send,
    method,
    { taskId, ...params },
    { capabilities: TASKS, headers: { "mcp-name": taskId } },
  );
}

/** Polls `tasks/get` until the task reaches `status`; returns that exchange. */
async function until(send: Send, taskId: string, status: string): Promise<Exchange> {
  let last: Exchange | undefined;
  await expect
    .poll(
      async () => {
        last = await task(send, "tasks/get", taskId);
        return last.result.status;
      },
      {
        timeout: WAIT_MS,
        interval: 100,
        message: `task ${taskId} never reached ${status}`,
      },
    )
    .toBe(status);
  return last!;
}

async function pidOf(send: Send): Promise<number> {
  const exchange = await call(send, "tools/call", { name: "whoami", arguments: {} });
  return (exchange.result.structuredContent as { pid: number }).pid;
}

// Tasks through three processes on one Redis node and on a Redis Cluster: the work runs on the
// process that created the task; every other request may land anywhere (each is sent to a chosen
// process directly).
describe.each<RedisTopology>(["standalone", "cluster"])(
  "tasks across three processes (Redis store, %s)",
  (topology) => {
    let cluster: Cluster;
    let on: Send[];
    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, topology });
    }, 90_000);
    afterAll(() => cluster?.stop());
    beforeEach(async () => {
      for (const backend of cluster.backends) if (!backend.alive) await backend.restart();
      on = cluster.backends.map((backend) => viaUrl(backend.url));
    }, 60_000);

    it("should poll on one process, answer input on another, and complete where it started", async () => {
      const created = await tool(on[0]!, "task_ask");
      expect(created.result.resultType).toBe("task");
      const taskId = created.result.taskId as string;
      const waiting = await until(on[1]!, taskId, "input_required");
      expect(Object.keys(waiting.result.inputRequests as object)).toEqual(["go"]);
      const ack = await task(on[2]!, "tasks/update", taskId, {
        inputResponses: { go: { action: "accept", content: {} } },
      });
      expect(ack.result.resultType).toBe("complete");
      const done = await until(on[1]!, taskId, "completed");
      expect((done.result.result as { structuredContent: unknown }).structuredContent).toEqual({
        pid: await pidOf(on[0]!),
        action: "accept",
      });
    });

    it("should cancel from another process", async () => {
      const taskId = (await tool(on[0]!, "task_hang")).result.taskId as string;
      await task(on[1]!, "tasks/cancel", taskId);
      const cancelled = await until(on[2]!, taskId, "cancelled");
      expect(cancelled.result.statusMessage).toBe("Cancelled by the client");
    });

    it("should mark the task failed once the lease of its killed process lapses", async () => {
      const taskId = (await tool(on[0]!, "task_hang")).result.taskId as string;
      expect((await task(on[1]!, "tasks/get", taskId)).result.status).toBe("working");
      await cluster.backends[0]!.kill();
      const failed = await until(on[1]!, taskId, "failed");
      expect(failed.result.error).toEqual({
        code: -32603,
        message: "The task was abandoned: the process running it stopped",
      });
    });

    it("should finish an idempotent task on another process once its process is killed", async () => {
      const first = await pidOf(on[0]!);
      const taskId = (await tool(on[0]!, "task_idempotent", { hangOnPid: first })).result
        .taskId as string;
      await cluster.backends[0]!.kill();
      const done = await until(on[2]!, taskId, "completed");
      const { pid } = (done.result.result as { structuredContent: { pid: number } })
        .structuredContent;
      expect(pid).not.toBe(first);
      expect([await pidOf(on[1]!), await pidOf(on[2]!)]).toContain(pid);
    });
  },
);
