// Tasks whose process stopped: failed, or run again elsewhere when the tool is idempotent.
import { describe, expect, it } from "vitest";
import { createMcpHandler, type McpStore, memoryStore } from "../../src/index.js";
import { viaFetch } from "../helpers/modern.js";
import { suiteTaskEndpoints, task, taskServer, tool, until } from "../helpers/task-server.js";

const { track } = suiteTaskEndpoints();

describe("work abandoned by its process", () => {
  function pair(store: McpStore) {
    const options = { store, tasks: { leaseMs: 300 } };
    const first = createMcpHandler(taskServer(), { secret: "s", ...options });
    const second = createMcpHandler(taskServer(), { secret: "s", ...options });
    track(second);
    return { first, second: viaFetch(second.fetch), firstSend: viaFetch(first.fetch) };
  }

  it("should mark a task failed when the process running it stops (not idempotent)", async () => {
    const { first, firstSend, second } = pair(memoryStore());
    const taskId = (await tool(firstSend, "job")).result.taskId as string;
    await first.close();
    const failed = await task(second, "tasks/get", taskId);
    expect(failed.result).toMatchObject({
      status: "failed",
      error: { code: -32603, message: "The task was abandoned: the process running it stopped" },
    });
  });

  it("should run an idempotent tool's task again on another process", async () => {
    const { first, firstSend, second } = pair(memoryStore());
    const taskId = (await tool(firstSend, "rerunnable")).result.taskId as string;
    await first.close();
    const restarted = await task(second, "tasks/get", taskId);
    expect(restarted.result).toMatchObject({
      status: "working",
      statusMessage: "Restarted after the process running it stopped",
    });
    const done = await until(second, taskId, "completed");
    expect(done.result.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "finished on run 2" }],
    });
  });
});
