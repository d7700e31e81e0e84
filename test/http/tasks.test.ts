import { afterEach, describe, expect, it } from "vitest";
import { bearerAuth } from "../../src/auth/index.js";
import {
  createMcpHandler,
  McpError,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
  memoryStore,
} from "../../src/index.js";
import type { McpStore } from "../../src/store/types.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import {
  call,
  type Exchange,
  modernHeaders,
  modernMeta,
  type Send,
  viaFetch,
  withBearer,
} from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import { assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const WITH_INPUT = { ...TASKS, elicitation: {} };

/** Work the tests finish by hand, and what the handlers saw. */
const gate = { release: () => {}, aborted: false, runs: 0 };

function taskServer(): McpServer {
  const server = new McpServer({ name: "tasks", version: "1.0.0" });
  server.tool({ name: "job", taskSupport: "optional" }, async (_args, ctx) => {
    await new Promise<void>((resolve, reject) => {
      gate.release = resolve;
      ctx.signal.addEventListener("abort", () => {
        gate.aborted = true;
        reject(ctx.signal.reason);
      });
    });
    return "job done";
  });
  server.tool(
    { name: "quick", taskSupport: "optional", annotations: { idempotentHint: true } },
    () => "quick done",
  );
  server.tool({ name: "ask", taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit("confirm", {
      message: "Sure?",
      requestedSchema: { type: "object", properties: {} },
    });
    return `answered ${String(answer.action)}`;
  });
  server.tool({ name: "boom", taskSupport: "optional" }, () => {
    throw new McpError(-32603, "boom");
  });
  server.tool({ name: "big", taskSupport: "optional" }, () => "x".repeat(5_000));
  server.tool(
    { name: "rerunnable", taskSupport: "optional", annotations: { idempotentHint: true } },
    async (_args, ctx) => {
      gate.runs++;
      // The first run hangs until its process stops; a re-run finishes.
      if (gate.runs === 1)
        await new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", reject));
      return `finished on run ${gate.runs}`;
    },
  );
  server.tool({ name: "only_task", taskSupport: "required" }, () => "done");
  server.tool(
    {
      name: "maybe",
      taskSupport: "optional",
      taskStart: "handler",
      input: { type: "object", properties: { size: { type: "integer" } } },
    },
    async ({ size }, ctx) => {
      if (Number(size) > 10) await ctx.startTask();
      return `processed ${String(size)}`;
    },
  );
  return server;
}

const handlers: McpHandler[] = [];
afterEach(async () => {
  gate.aborted = false;
  gate.runs = 0;
  await Promise.all(handlers.splice(0).map((mcp) => mcp.close()));
});

function endpoint(options: McpHandlerOptions = {}): { mcp: McpHandler; send: Send } {
  const mcp = createMcpHandler(taskServer(), { secret: "tasks-tests", ...options });
  handlers.push(mcp);
  return { mcp, send: viaFetch(mcp.fetch) };
}

function tool(
  send: Send,
  name: string,
  args = {},
  capabilities: object = TASKS,
): Promise<Exchange> {
  return call(
    send,
    "tools/call",
    { name, arguments: args },
    { capabilities: capabilities as Record<string, unknown> },
  );
}

function task(
  send: Send,
  method: string,
  taskId: string,
  params = {},
  capabilities: object = TASKS,
) {
  return call(
    send,
    method,
    { taskId, ...params },
    {
      capabilities: capabilities as Record<string, unknown>,
      headers: { "mcp-name": taskId },
    },
  );
}

/** Polls `tasks/get` until the task reaches `status`; returns that exchange. */
async function until(send: Send, taskId: string, status: string): Promise<Exchange> {
  let polled: Exchange | undefined;
  await expect
    .poll(
      async () => {
        polled = await task(send, "tasks/get", taskId);
        return polled.result.status;
      },
      {
        timeout: 3_000,
        message: `task ${taskId} never reached ${status}`,
      },
    )
    .toBe(status);
  return polled!;
}

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

describe("tasks and principals", () => {
  const auth = bearerAuth({
    authorizationServers: ["https://auth.example.com"],
    verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
  });
  it("should hide a principal's task from every other principal", async () => {
    const { send } = endpoint({ auth });
    const alice = withBearer(send, "alice");
    const bob = withBearer(send, "bob");
    const taskId = (await tool(alice, "job")).result.taskId as string;
    const stolen = await task(bob, "tasks/get", taskId);
    const unknown = await task(bob, "tasks/get", "no-such-task");
    expect(stolen.error).toEqual(unknown.error);
    expect((await task(bob, "tasks/cancel", taskId)).error?.code).toBe(-32602);
    expect((await task(bob, "tasks/update", taskId, { inputResponses: {} })).error?.code).toBe(
      -32602,
    );
    expect((await task(alice, "tasks/get", taskId)).result.status).toBe("working");
    gate.release();
  });
});

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

describe("work abandoned by its process", () => {
  function pair(store: McpStore) {
    const options = { store, tasks: { leaseMs: 300 } };
    const first = createMcpHandler(taskServer(), { secret: "s", ...options });
    const second = createMcpHandler(taskServer(), { secret: "s", ...options });
    handlers.push(second);
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
