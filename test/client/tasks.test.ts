import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  InputRequiredError,
  McpClient,
  type McpClientOptions,
  McpError,
  type Task,
} from "../../src/client/index.js";
import { McpServer, McpError as ServerError } from "../../src/index.js";
import { type OurServer, startOurServer } from "./servers.js";

const question = (message: string) => ({
  message,
  requestedSchema: { type: "object" as const, properties: { name: { type: "string" as const } } },
});

/** What the tools saw, and the gate the tests open by hand. */
const probe = { aborted: [] as string[], release: () => {} };

function abortable(name: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    probe.release = resolve;
    signal.addEventListener("abort", () => {
      probe.aborted.push(name);
      reject(signal.reason);
    });
  });
}

function taskServer(): McpServer {
  const server = new McpServer({ name: "tasks", version: "1.0.0" });
  server.tool({ name: "quick", taskSupport: "optional" }, () => "quick done");
  server.tool({ name: "gated", taskSupport: "optional" }, async (_args, ctx) => {
    await abortable("gated", ctx.signal);
    return "opened";
  });
  server.tool({ name: "ask", taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit("name", question("Your name?"));
    return `Hello, ${String((answer.content as { name?: string } | undefined)?.name)}`;
  });
  server.tool({ name: "two_questions", taskSupport: "optional" }, async (_args, ctx) => {
    const [first, second] = await Promise.all([
      ctx.elicit("first", question("First?")),
      ctx.elicit("second", question("Second?")),
    ]);
    return `Answers: ${first.action}, ${second.action}`;
  });
  server.tool({ name: "boom", taskSupport: "optional" }, () => {
    throw new ServerError(-32603, "boom");
  });
  server.tool({ name: "throws", taskSupport: "optional" }, () => {
    throw new Error("database unavailable");
  });
  server.tool(
    {
      name: "bad_output",
      taskSupport: "optional",
      output: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    },
    () => ({ n: "not a number" }),
  );
  server.tool({ name: "only_task", taskSupport: "required" }, () => "done");
  // The conformance suite's test_tool_with_task: a multi round-trip question, then a task.
  server.tool(
    { name: "greet_later", taskSupport: "optional", taskStart: "handler" },
    async (_args, ctx) => {
      const answer = await ctx.elicit("user_name", question("What is your name?"));
      await ctx.startTask();
      const more = await ctx.elicit("greeting", question("Which greeting?"));
      const name = (answer.content as { name?: string } | undefined)?.name;
      const greeting = (more.content as { name?: string } | undefined)?.name;
      return `${String(greeting)}, ${String(name)}!`;
    },
  );
  return server;
}

describe.each(["fetch", "node"] as const)("McpClient and tasks, through %s", (transport) => {
  let ours: OurServer;
  const seen: string[] = [];
  const asked: { key: string | undefined; message: unknown }[] = [];

  beforeAll(async () => {
    ours = await startOurServer(transport, {
      server: taskServer(),
      seen,
      handler: { tasks: { pollIntervalMs: 50 } },
    });
  });
  afterAll(() => ours.close());
  afterEach(() => {
    seen.length = 0;
    asked.length = 0;
    probe.aborted = [];
  });

  const connect = (options: McpClientOptions = {}) =>
    McpClient.connect(ours.url, {
      ...ours.reach,
      onInput: {
        elicitation: (params, context) => {
          asked.push({ key: context.key, message: params.message });
          return { action: "accept", content: { name: `${context.key}-answer` } };
        },
      },
      ...options,
    });

  it("should poll a task to its result and return it as a direct answer", async () => {
    const client = await connect();
    const states: Task[] = [];
    const result = await client.callTool("quick", {}, { onTask: (task) => states.push(task) });
    expect(result.content).toEqual([{ type: "text", text: "quick done" }]);
    expect(states.map((task) => task.status)).toEqual(["working", "completed"]);
    expect(states[0]).toMatchObject({ pollIntervalMs: 50, ttlMs: 3_600_000 });
    expect(seen).toContain("tasks/get");
    expect(await (await client.tool("quick"))!.call()).toEqual([
      { type: "text", text: "quick done" },
    ]);
    await client.close();
  });

  it("should answer a task's elicitation through onInput, once, with tasks/update", async () => {
    const client = await connect();
    const result = await client.callTool("ask");
    expect(result.content).toEqual([{ type: "text", text: "Hello, name-answer" }]);
    expect(asked).toEqual([{ key: "name", message: "Your name?" }]);
    expect(seen.filter((method) => method === "tasks/update")).toHaveLength(1);
    await client.close();
  });

  it("should answer every key of a task that asks two questions, each once", async () => {
    const client = await connect();
    const result = await client.callTool("two_questions");
    expect(result.content).toEqual([{ type: "text", text: "Answers: accept, accept" }]);
    expect(asked.map((entry) => entry.key).sort()).toEqual(["first", "second"]);
    await client.close();
  });

  it("should throw a failed task's JSON-RPC error", async () => {
    const client = await connect();
    const failed = client.callTool("boom");
    await expect(failed).rejects.toBeInstanceOf(McpError);
    await expect(failed).rejects.toMatchObject({ code: -32603, message: "boom" });
    await client.close();
  });

  it("should give Tool.call { error } for a task whose result is an error or breaks the schema", async () => {
    const client = await connect();
    expect(await (await client.tool("throws"))!.call()).toEqual({
      error: expect.stringContaining("database unavailable"),
    });
    expect(await (await client.tool("bad_output"))!.call()).toEqual({
      error: expect.stringContaining("invalid structured content"),
    });
    await client.close();
  });

  it("should send tasks/cancel when the call is aborted, and reject with the abort's reason", async () => {
    const client = await connect();
    const controller = new AbortController();
    let taskId = "";
    const call = client.callTool(
      "gated",
      {},
      {
        signal: controller.signal,
        onTask: (task) => {
          taskId = task.taskId;
          // Gives up while the client is following the task, not as it is created.
          setTimeout(() => controller.abort(new Error("user gave up")), 120);
        },
      },
    );
    await expect(call).rejects.toThrow("user gave up");
    expect(seen).toContain("tasks/cancel");
    // Cancellation reaches the work shortly after its ack.
    await expect.poll(() => probe.aborted).toEqual(["gated"]);
    const other = await connect();
    const state = await other.request("tasks/get", { taskId });
    expect(state).toMatchObject({ taskId, status: "cancelled" });
    await expect(other.resumeTask(taskId)).rejects.toMatchObject({ name: "AbortError" });
    await other.close();
    await client.close();
  });

  it("should cancel the task when a poll times out", async () => {
    const base = ours.reach.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const slowPolls: typeof fetch = (input, init) => {
      const method = new Headers(init?.headers).get("mcp-method");
      if (method !== "tasks/get") return base(input, init);
      return new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    };
    const client = await connect({ fetch: slowPolls, timeoutMs: 300 });
    await expect(client.callTool("gated")).rejects.toMatchObject({ name: "TimeoutError" });
    expect(seen).toContain("tasks/cancel");
    // Cancellation reaches the work shortly after its ack.
    await expect.poll(() => probe.aborted).toEqual(["gated"]);
    await client.close();
  });

  it("should cancel the task and throw InputRequiredError when no callback answers", async () => {
    // Declares elicitation without answering it, so the server asks and nothing replies.
    const client = await connect({ onInput: {}, capabilities: { elicitation: {} } });
    const error = await client.callTool("ask").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputRequiredError);
    expect((error as InputRequiredError).inputRequests).toMatchObject({
      name: { method: "elicitation/create" },
    });
    expect(seen).toContain("tasks/cancel");
    await client.close();
  });

  it("should get the blocking result with tasks turned off", async () => {
    const client = await connect({ tasks: false });
    const states: Task[] = [];
    const result = await client.callTool("ask", {}, { onTask: (task) => states.push(task) });
    expect(result.content).toEqual([{ type: "text", text: "Hello, name-answer" }]);
    expect(states).toEqual([]);
    expect(seen.some((method) => method.startsWith("tasks/"))).toBe(false);
    await expect(client.callTool("only_task")).rejects.toMatchObject({ code: -32021 });
    await client.close();
  });

  it("should answer a multi round-trip question, then follow the task the handler starts", async () => {
    const client = await connect();
    const states: string[] = [];
    const result = await client.callTool(
      "greet_later",
      {},
      { onTask: (task) => states.push(task.status) },
    );
    expect(result.content).toEqual([{ type: "text", text: "greeting-answer, user_name-answer!" }]);
    expect(asked.map((entry) => entry.key)).toEqual(["user_name", "greeting"]);
    expect(states[0]).toBe("working");
    expect(states).toContain("input_required");
    expect(states.at(-1)).toBe("completed");
    await client.close();
  });

  it("should resume a task by its id from another client", async () => {
    const first = await connect();
    let taskId = "";
    let call: Promise<unknown> = Promise.resolve();
    await new Promise<void>((resolve) => {
      const onTask = (task: Task) => {
        taskId = task.taskId;
        resolve();
      };
      call = first.callTool("gated", {}, { onTask });
    });
    const second = await connect();
    const resumed = second.resumeTask(taskId);
    // The work ends while both clients follow it, so each must see the one result.
    setTimeout(() => probe.release(), 100);
    const opened = [{ type: "text", text: "opened" }];
    expect((await resumed).content).toEqual(opened);
    expect(await call).toMatchObject({ content: opened });
    await second.close();
    await first.close();
  });

  it("should stop following a task when the client closes, and leave it to be resumed", async () => {
    const client = await connect();
    let taskId = "";
    const onTask = (task: Task) => {
      taskId = task.taskId;
      void client.close();
    };
    await expect(client.callTool("gated", {}, { onTask })).rejects.toThrow("The client was closed");
    expect(seen).not.toContain("tasks/cancel");
    const other = await connect();
    // The work ends after the resumption started following it.
    setTimeout(() => probe.release(), 100);
    expect((await other.resumeTask(taskId)).content).toEqual([{ type: "text", text: "opened" }]);
    await other.close();
  });

  it("should run task tools as blocking calls in the legacy era", async () => {
    const client = await connect({ era: "legacy" });
    expect((await client.callTool("quick")).content).toEqual([
      { type: "text", text: "quick done" },
    ]);
    expect(seen.some((method) => method.startsWith("tasks/"))).toBe(false);
    await client.close();
  });
});
