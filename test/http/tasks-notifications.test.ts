// Task status notifications on subscriptions/listen.
import { describe, expect, it } from "vitest";
import type { McpHandler } from "../../src/index.js";
import { modernHeaders, modernMeta, type Send } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { gate, suiteTaskEndpoints, TASKS, tool } from "../helpers/task-server.js";

const { endpoint } = suiteTaskEndpoints();

describe("task status notifications", () => {
  async function listen(send: Send, mcp: McpHandler, taskIds: string[], capabilities: object) {
    const response = await mcp.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "listen-1",
          method: "subscriptions/listen",
          params: {
            notifications: { taskIds },
            _meta: modernMeta(capabilities as Record<string, unknown>),
          },
        }),
      }),
    );
    void send;
    return response;
  }

  it("should send notifications/tasks to listeners of the task, with the detailed task", async () => {
    const { send, mcp } = endpoint();
    const taskId = (await tool(send, "job")).result.taskId as string;
    const response = await listen(send, mcp, [taskId], TASKS);
    const reader = new SseReader(response.body!);
    const ack = await reader.next();
    assertModernMessage(ack, "subscriptions/listen");
    expect(ack).toMatchObject({ params: { notifications: { taskIds: [taskId] } } });
    gate.release();
    const notification = await reader.next();
    assertModernMessage(notification, "subscriptions/listen");
    expect(notification).toMatchObject({
      method: "notifications/tasks",
      params: {
        taskId,
        status: "completed",
        result: { content: [{ type: "text", text: "job done" }] },
      },
    });
    await reader.cancel();
  });

  it("should refuse task notifications to a client without the extension", async () => {
    const { send, mcp } = endpoint();
    const response = await listen(send, mcp, ["some-task"], {});
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe(-32021);
  });
});
