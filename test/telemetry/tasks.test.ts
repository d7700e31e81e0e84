import { randomUUID } from "node:crypto";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createMcpHandler, type McpServer } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import { call, type Send, viaFetch } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import {
  suiteTaskEndpoints,
  TASKS,
  task,
  taskServer,
  tool,
  until,
} from "../helpers/task-server.js";

// Tasks in traces: the tools/call that creates a task records it on its SERVER span; each run of
// the task's work is an INTERNAL span that starts a trace of its own, linked to that call through
// the task record, so the link holds on whichever process runs the work.

const { track } = suiteTaskEndpoints();

/** A client's trace context, sent in the call's `_meta`. */
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-00f067aa0ba902b7-01`;

/** The one ended span of `kind` named `name`. */
async function ended(otel: TestOtel, name: string, kind: SpanKind): Promise<ReadableSpan> {
  const matching = () => otel.named(name).filter((span) => span.kind === kind);
  await expect.poll(() => matching().length, { message: `no ${name} span ended` }).toBe(1);
  return matching()[0]!;
}

/** The trace and span ids a span's links point at. */
function linked(span: ReadableSpan) {
  return span.links.map(({ context }) => ({ traceId: context.traceId, spanId: context.spanId }));
}

/** The trace and span ids of a span, as a link to it reads. */
function idsOf(span: ReadableSpan) {
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/** The task tools, plus one whose handler starts its own span and one that reports an error. */
function tracedTaskServer(otel: TestOtel): McpServer {
  const server = taskServer();
  server.tool({ name: "traced", taskSupport: "optional" }, async () => {
    const tracer = otel.tracerProvider.getTracer("a-tool");
    await tracer.startActiveSpan("look up", async (span) => span.end());
    return "traced";
  });
  server.tool({ name: "refused", taskSupport: "optional" }, () => ({
    content: [{ type: "text", text: "not today" }],
    isError: true,
  }));
  return server;
}

describe("task spans", () => {
  const otel = new TestOtel();
  let send: Send;
  beforeEach(() => {
    otel.reset();
    const mcp = createMcpHandler(tracedTaskServer(otel), {
      secret: "tasks-tests",
      telemetry: otel.providers,
    });
    track(mcp);
    send = viaFetch(mcp.fetch);
  });

  it("should record the created task on the call's SERVER span", async () => {
    const { result } = await tool(send, "quick");
    expect(result.resultType).toBe("task");
    const created = await ended(otel, "tools/call quick", SpanKind.SERVER);
    expect(created.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "quick",
      "mcp_mount.task.id": result.taskId,
      "mcp_mount.result_type": "task",
    });
    expect(created.events.map(({ name, attributes }) => ({ name, attributes }))).toEqual([
      { name: "task created", attributes: { "mcp_mount.task.id": result.taskId } },
    ]);
    expect(created.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("should run the work in an INTERNAL span of its own trace, linked to the call", async () => {
    const { result } = await call(
      send,
      "tools/call",
      { name: "quick", arguments: {} },
      { capabilities: TASKS, meta: { traceparent: CLIENT_TRACEPARENT } },
    );
    const created = await ended(otel, "tools/call quick", SpanKind.SERVER);
    expect(created.spanContext().traceId).toBe(CLIENT_TRACE);
    const run = await ended(otel, "tools/call quick", SpanKind.INTERNAL);
    expect(run.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "quick",
      "gen_ai.operation.name": "execute_tool",
      "mcp_mount.task.id": result.taskId,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.spanContext().traceId).not.toBe(CLIENT_TRACE);
    expect(linked(run)).toEqual([idsOf(created)]);
  });

  it("should nest the spans the tool's handler starts under the run span", async () => {
    await tool(send, "traced");
    const run = await ended(otel, "tools/call traced", SpanKind.INTERNAL);
    const inner = await ended(otel, "look up", SpanKind.INTERNAL);
    expect(inner.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(inner.spanContext().traceId).toBe(run.spanContext().traceId);
  });

  it("should end a run that failed with a JSON-RPC error in ERROR, its code as error.type", async () => {
    const { result } = await tool(send, "boom");
    await until(send, result.taskId as string, "failed");
    const run = await ended(otel, "tools/call boom", SpanKind.INTERNAL);
    expect(run.attributes["error.type"]).toBe("-32603");
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: "boom" });
  });

  it("should end a run whose result is an error in ERROR, as a tool_error", async () => {
    const { result } = await tool(send, "refused");
    await until(send, result.taskId as string, "completed");
    const run = await ended(otel, "tools/call refused", SpanKind.INTERNAL);
    expect(run.attributes["error.type"]).toBe("tool_error");
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    // The call itself succeeded: it answered with the task.
    const created = await ended(otel, "tools/call refused", SpanKind.SERVER);
    expect(created.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("should record a task the handler started with ctx.startTask() on the call's span", async () => {
    const { result } = await tool(send, "maybe", { size: 20 });
    expect(result.resultType).toBe("task");
    const created = await ended(otel, "tools/call maybe", SpanKind.SERVER);
    expect(created.attributes["mcp_mount.task.id"]).toBe(result.taskId);
    expect(created.attributes["mcp_mount.result_type"]).toBe("task");
    const run = await ended(otel, "tools/call maybe", SpanKind.INTERNAL);
    expect(run.attributes["mcp_mount.task.id"]).toBe(result.taskId);
    expect(linked(run)).toEqual([idsOf(created)]);
  });

  it("should record no task and no run when the handler finished without starting one", async () => {
    const { result } = await tool(send, "maybe", { size: 5 });
    expect(result.resultType).toBe("complete");
    const created = await ended(otel, "tools/call maybe", SpanKind.SERVER);
    expect(created.attributes["mcp_mount.task.id"]).toBeUndefined();
    expect(created.events).toEqual([]);
    expect(otel.spans().filter((span) => span.kind === SpanKind.INTERNAL)).toEqual([]);
  });
});

describe("task spans across processes on Redis", () => {
  let redis: RedisServer;
  const connections: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.quit()));
    await redis?.close();
  });

  /** A handler on the shared Redis with its own SDK, as another process would have. */
  function processOnRedis(prefix: string, otel: TestOtel) {
    const connection = new Redis(redis.url);
    connections.push(connection);
    return createMcpHandler(taskServer(), {
      secret: "s",
      store: redisStore({ redis: connection, prefix }),
      tasks: { leaseMs: 300 },
      telemetry: otel.providers,
    });
  }

  it("should link a run on another process to the creating call, through the stored record", async () => {
    const prefix = `t${randomUUID()}:`;
    const [firstOtel, secondOtel] = [new TestOtel(), new TestOtel()];
    const first = processOnRedis(prefix, firstOtel);
    const second = processOnRedis(prefix, secondOtel);
    track(second);
    const secondSend = viaFetch(second.fetch);

    const { result } = await tool(viaFetch(first.fetch), "rerunnable");
    const taskId = result.taskId as string;
    const created = await ended(firstOtel, "tools/call rerunnable", SpanKind.SERVER);
    const { traceId, spanId } = idsOf(created);
    const stored = await redisStore({ redis: connections[1]!, prefix }).tasks.get(taskId);
    expect(stored?.traceparent).toBe(`00-${traceId}-${spanId}-01`);

    // The first process stops: its run ends unfinished; the second runs the work again.
    await first.close();
    const abandoned = await ended(firstOtel, "tools/call rerunnable", SpanKind.INTERNAL);
    expect(abandoned.status.code).toBe(SpanStatusCode.ERROR);
    await task(secondSend, "tasks/get", taskId);
    await until(secondSend, taskId, "completed");

    const rerun = await ended(secondOtel, "tools/call rerunnable", SpanKind.INTERNAL);
    expect(rerun.attributes["mcp_mount.task.id"]).toBe(taskId);
    expect(rerun.status.code).toBe(SpanStatusCode.UNSET);
    expect(linked(rerun)).toEqual([{ traceId, spanId }]);
    const restarted = secondOtel
      .named("tasks/get")
      .flatMap((span) => span.events.map(({ name }) => name));
    expect(restarted).toContain("task restarted");
  });

  it("should record on the tasks/get span that it failed work its process abandoned", async () => {
    const prefix = `t${randomUUID()}:`;
    const [firstOtel, secondOtel] = [new TestOtel(), new TestOtel()];
    const first = processOnRedis(prefix, firstOtel);
    const second = processOnRedis(prefix, secondOtel);
    track(second);
    const { result } = await tool(viaFetch(first.fetch), "job");
    await first.close();
    const polled = await task(viaFetch(second.fetch), "tasks/get", result.taskId as string);
    expect(polled.result.status).toBe("failed");
    const get = await ended(secondOtel, "tasks/get", SpanKind.SERVER);
    expect(get.events.map(({ name, attributes }) => ({ name, attributes }))).toEqual([
      { name: "task abandoned", attributes: { "mcp_mount.task.id": result.taskId } },
    ]);
    expect(secondOtel.spans().filter((span) => span.kind === SpanKind.INTERNAL)).toEqual([]);
  });
});
