// The tasks extension over HTTP: a task's life from creation to its result, input, cancellation,
// failure, TTL and caps.
import { describe, expect, it } from "vitest";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call } from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import {
  gate,
  suiteTaskEndpoints,
  TASKS,
  task,
  tool,
  until,
  WITH_INPUT,
} from "../helpers/task-server.js";

const { endpoint } = suiteTaskEndpoints();

describe("the tasks extension", () => {
  it("should advertise the extension in server/discover, and not when turned off", async () => {
    const { send } = endpoint();
    expect((await call(send, "server/discover")).result.capabilities).toMatchObject({
      extensions: { "io.modelcontextprotocol/tasks": {} },
    });
    const off = endpoint({ tasks: false });
    expect((await call(off.send, "server/discover")).result.capabilities).not.toHaveProperty(
      "extensions",
    );
    const get = await task(off.send, "tasks/get", "x");
    expect(get.status).toBe(404);
    expect(get.error?.code).toBe(-32601);
  });

  it("should run a task from creation to its inlined result", async () => {
    const { send } = endpoint();
    const created = await tool(send, "job");
    expect(created.result).toMatchObject({
      resultType: "task",
      status: "working",
      ttlMs: 3_600_000,
      pollIntervalMs: 1_000,
    });
    const taskId = created.result.taskId as string;
    expect((await task(send, "tasks/get", taskId)).result.status).toBe("working");
    gate.release();
    const done = await until(send, taskId, "completed");
    expect(done.result.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "job done" }],
    });
  });

  it("should answer synchronously to clients without the extension, and -32021 for required tools", async () => {
    const { send } = endpoint();
    const quick = await tool(send, "quick", {}, {});
    expect(quick.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "quick done" }],
    });
    const required = await tool(send, "only_task", {}, {});
    expect(required.status).toBe(400);
    expect(required.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
    });
    const get = await task(send, "tasks/get", "x", {}, {});
    expect(get.error?.code).toBe(-32021);
  });

  it("should surface input requests, take answers through tasks/update, and resume", async () => {
    const { send } = endpoint();
    const taskId = (await tool(send, "ask", {}, WITH_INPUT)).result.taskId as string;
    const waiting = await until(send, taskId, "input_required");
    expect(waiting.result.inputRequests).toEqual({
      confirm: {
        method: "elicitation/create",
        params: { message: "Sure?", requestedSchema: { type: "object", properties: {} } },
      },
    });
    const ignored = await task(
      send,
      "tasks/update",
      taskId,
      { inputResponses: { nope: { action: "accept" } } },
      WITH_INPUT,
    );
    expect(ignored.result).toEqual({ resultType: "complete", _meta: expect.any(Object) });
    expect((await task(send, "tasks/get", taskId, {}, WITH_INPUT)).result.status).toBe(
      "input_required",
    );
    await task(
      send,
      "tasks/update",
      taskId,
      { inputResponses: { confirm: { action: "accept", content: {} } } },
      WITH_INPUT,
    );
    const done = await until(send, taskId, "completed");
    expect(done.result.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "answered accept" }],
    });
  });

  it("should cancel a running task: the ack is empty, the status cancelled, the work aborted", async () => {
    const { send } = endpoint();
    const taskId = (await tool(send, "job")).result.taskId as string;
    const ack = await task(send, "tasks/cancel", taskId);
    expect(Object.keys(ack.result).sort()).toEqual(["_meta", "resultType"]);
    const cancelled = await task(send, "tasks/get", taskId);
    expect(cancelled.result).toMatchObject({
      status: "cancelled",
      statusMessage: "Cancelled by the client",
    });
    await expect.poll(() => gate.aborted).toBe(true);
    expect((await task(send, "tasks/cancel", taskId)).result.resultType).toBe("complete");
  });

  it("should fail a task on a JSON-RPC error, and on a result over maxResultBytes", async () => {
    const { send } = endpoint({ tasks: { maxResultBytes: 1_000 } });
    const boom = await until(send, (await tool(send, "boom")).result.taskId as string, "failed");
    expect(boom.result.error).toEqual({ code: -32603, message: "boom" });
    const big = await until(send, (await tool(send, "big")).result.taskId as string, "failed");
    expect(big.result.error).toMatchObject({
      code: -32603,
      message: "The task's result is too large",
    });
  });

  it("should start a task from the handler only when it asks to", async () => {
    const { send } = endpoint();
    const small = await tool(send, "maybe", { size: 3 });
    expect(small.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "processed 3" }],
    });
    const large = await tool(send, "maybe", { size: 30 });
    expect(large.result.resultType).toBe("task");
    const done = await until(send, large.result.taskId as string, "completed");
    expect(done.result.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "processed 30" }],
    });
  });

  it("should forget a task after its TTL", async () => {
    const { send } = endpoint({ tasks: { ttlMs: 300 } });
    const taskId = (await tool(send, "quick")).result.taskId as string;
    await until(send, taskId, "completed");
    // The TTL (300 ms) runs out.
    await sleep(350);
    const gone = await task(send, "tasks/get", taskId);
    expect(gone.error).toMatchObject({
      code: -32602,
      message: "Failed to retrieve task: Task not found",
    });
  });

  it("should cap each principal's unfinished tasks", async () => {
    const { send } = endpoint({ tasks: { maxActivePerPrincipal: 1 } });
    const first = await tool(send, "job");
    const second = await tool(send, "job");
    expect(second.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining("Too many unfinished tasks"),
    });
    gate.release();
    await until(send, first.result.taskId as string, "completed");
    expect((await tool(send, "quick")).result.resultType).toBe("task");
  });

  it("should require Mcp-Name to mirror the taskId", async () => {
    const { send } = endpoint();
    const taskId = (await tool(send, "quick")).result.taskId as string;
    const wrong = await call(
      send,
      "tasks/get",
      { taskId },
      { capabilities: TASKS, headers: { "mcp-name": "other" } },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.error?.code).toBe(-32020);
  });

  it("should run task-supporting tools synchronously for legacy sessions", async () => {
    const { send } = endpoint();
    const session = await openSession(send);
    const result = await legacyCall(send, session, "tools/call", { name: "quick", arguments: {} });
    expect(result.result).toEqual({ content: [{ type: "text", text: "quick done" }] });
  });
});
