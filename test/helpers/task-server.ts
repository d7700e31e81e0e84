import { afterEach, expect } from "vitest";
import {
  createMcpHandler,
  McpError,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
} from "../../src/index.js";
import { call, type Exchange, type Send, viaFetch } from "./modern.js";

// The tasks suites' server and the requests they send it; every exchange is validated by `call`.

/** The client capabilities that turn tasks on. */
export const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
/** Tasks, and answers to elicitation. */
export const WITH_INPUT = { ...TASKS, elicitation: {} };

/** Work the tests finish by hand, and what the handlers saw. */
export const gate = { release: () => {}, aborted: false, runs: 0 };

/** Task tools for each case: gated, quick, asking, failing, too large, re-runnable, and more. */
export function taskServer(): McpServer {
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

/**
 * Handlers for the calling suite, each closed after its test (the gate reset with them):
 * `endpoint` makes one reached through fetch, `track` adds one made another way.
 */
export function suiteTaskEndpoints() {
  const handlers: McpHandler[] = [];
  afterEach(async () => {
    gate.aborted = false;
    gate.runs = 0;
    await Promise.all(handlers.splice(0).map((mcp) => mcp.close()));
  });
  const track = (mcp: McpHandler) => handlers.push(mcp);
  const endpoint = (options: McpHandlerOptions = {}): { mcp: McpHandler; send: Send } => {
    const mcp = createMcpHandler(taskServer(), { secret: "tasks-tests", ...options });
    track(mcp);
    return { mcp, send: viaFetch(mcp.fetch) };
  };
  return { endpoint, track };
}

/** Calls a tool as a client with the tasks extension (or `capabilities`). */
export function tool(
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

/** Sends a `tasks/*` request about `taskId`, its name mirrored in Mcp-Name. */
export function task(
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
export async function until(send: Send, taskId: string, status: string): Promise<Exchange> {
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
