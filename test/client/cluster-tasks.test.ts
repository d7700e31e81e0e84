import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient, type McpClientOptions } from "../../src/client/index.js";
import { type Cluster, servedBy, startCluster } from "../helpers/cluster.js";

/** One request the client sent through the proxy: its MCP method and the backend that served it. */
interface Hop {
  method: string | null;
  backend: number;
}

// Our client against three server processes on one Redis behind a round-robin proxy: each
// poll, update and cancel may land on any process, and the task still ends where it should.
describe("McpClient and tasks across three processes (Redis store)", () => {
  let cluster: Cluster;
  const hops: Hop[] = [];
  beforeAll(async () => {
    cluster = await startCluster({ processes: 3 });
  }, 90_000);
  afterAll(() => cluster?.stop());

  const connect = (options: McpClientOptions = {}) =>
    McpClient.connect(cluster.url, {
      eraCache: new Map(),
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        hops.push({
          method: new Headers(init?.headers).get("mcp-method"),
          backend: servedBy(response),
        });
        return response;
      },
      onInput: { elicitation: () => ({ action: "accept", content: {} }) },
      ...options,
    });

  it("should follow a task that asks for input to its result, whichever process answers", async () => {
    const client = await connect();
    const result = await client.callTool("task_ask");
    expect(result.structuredContent).toMatchObject({ action: "accept" });
    const served = (method: string) =>
      new Set(hops.filter((hop) => hop.method === method).map((hop) => hop.backend));
    expect(served("tasks/update").size).toBe(1);
    // Three or more requests after the call, round-robin: at least two processes took part.
    expect(new Set([...served("tasks/get"), ...served("tasks/update")]).size).toBeGreaterThan(1);
    await client.close();
  }, 30_000);

  it("should cancel a hanging task on abort, from whichever process gets tasks/cancel", async () => {
    const client = await connect();
    const controller = new AbortController();
    let taskId = "";
    const call = client.callTool(
      "task_hang",
      {},
      {
        signal: controller.signal,
        onTask: (task) => {
          taskId = task.taskId;
          // Gives up while the client is following the task, not as it is created.
          setTimeout(() => controller.abort(new Error("stop")), 200);
        },
      },
    );
    await expect(call).rejects.toThrow("stop");
    const other = await connect();
    expect(await other.request("tasks/get", { taskId })).toMatchObject({ status: "cancelled" });
    await other.close();
    await client.close();
  }, 30_000);
});
