import { context, SpanKind, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler, type McpHandlerOptions } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, viaFetch } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

/** A server whose tool starts a span of the app's own, as an instrumented handler does. */
function appServer(otel: TestOtel) {
  const server = createFixtureServer();
  const tracer = otel.tracerProvider.getTracer("app");
  server.tool({ name: "traced" }, () => {
    tracer.startActiveSpan("inner work", (span) => span.end());
    return "done";
  });
  return server;
}

/** Mounts the app server on a real port with `telemetry`, its spans going to `otel`. */
async function mountWith(
  otel: TestOtel,
  telemetry: McpHandlerOptions["telemetry"],
): Promise<Mounted> {
  return mount("node", createMcpHandler(appServer(otel), { telemetry }));
}

// The telemetry modes of the handler: propagate records nothing of ours yet makes the caller's
// trace context the handler's; off records and propagates nothing.
describe("telemetry modes of the handler", () => {
  failOnUnhandled();
  const otel = new TestOtel();
  let propagating: Mounted;
  let off: Mounted;
  beforeAll(async () => {
    propagating = await mountWith(otel, { mode: "propagate", ...otel.providers });
    off = await mountWith(otel, { mode: "off", ...otel.providers });
  });
  afterAll(async () => {
    await propagating.close();
    await off.close();
  });
  beforeEach(() => otel.reset());

  const callTraced = (mounted: Mounted) =>
    call(
      mounted.send,
      "tools/call",
      { name: "traced", arguments: {} },
      { meta: { traceparent: TRACEPARENT } },
    );

  it("should make the incoming traceparent the parent of the handler's spans in propagate mode, with no span of ours", async () => {
    const { result } = await callTraced(propagating);
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    await expect.poll(() => otel.named("inner work").length).toBe(1);
    const inner = otel.named("inner work")[0]!;
    expect(inner.spanContext().traceId).toBe(TRACE_ID);
    expect(inner.parentSpanContext).toMatchObject({ spanId: CALLER_SPAN, isRemote: true });
    expect(otel.spans().map((span) => span.name)).toEqual(["inner work"]);
    expect(await otel.histogram("mcp.server.operation.duration")).toEqual([]);
  });

  it("should keep the context active as the message arrived in propagate mode when the message carries none", async () => {
    const handler = createMcpHandler(appServer(otel), {
      telemetry: { mode: "propagate", ...otel.providers },
    });
    const app = otel.tracerProvider.getTracer("app").startSpan("POST /mcp");
    const send = viaFetch((request) =>
      context.with(trace.setSpan(context.active(), app), () => handler.fetch(request)),
    );
    const { result } = await call(send, "tools/call", { name: "traced", arguments: {} });
    app.end();
    await handler.close();
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    await expect.poll(() => otel.named("inner work").length).toBe(1);
    const inner = otel.named("inner work")[0]!;
    expect(inner.spanContext().traceId).toBe(app.spanContext().traceId);
    expect(inner.parentSpanContext?.spanId).toBe(app.spanContext().spanId);
    expect(
      otel
        .spans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(["POST /mcp", "inner work"]);
    expect(await otel.histogram("mcp.server.operation.duration")).toEqual([]);
  });

  it("should make no span, no metric and no parent from the message in mode off", async () => {
    await callTraced(off);
    await expect.poll(() => otel.named("inner work").length).toBe(1);
    const inner = otel.named("inner work")[0]!;
    expect(inner.spanContext().traceId).not.toBe(TRACE_ID);
    expect(inner.parentSpanContext).toBeUndefined();
    expect(otel.spans().map((span) => span.name)).toEqual(["inner work"]);
    expect(await otel.histogram("mcp.server.operation.duration")).toEqual([]);
  });

  it("should refuse an unknown mode", () => {
    const telemetry = { mode: "sampled" } as unknown as McpHandlerOptions["telemetry"];
    expect(() => createMcpHandler(createFixtureServer(), { telemetry })).toThrow(/telemetry.mode/);
  });
});

// The client in propagate mode: no CLIENT span of its own, yet the app's active span travels in
// params._meta, so the server's spans join the app's trace.
describe("telemetry modes of the client", () => {
  failOnUnhandled();
  const otel = new TestOtel();
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount("node", createMcpHandler(appServer(otel), { telemetry: otel.providers }));
  });
  afterAll(() => mounted.close());
  beforeEach(() => otel.reset());

  /** Calls `traced` inside an app span `agent step`, and returns that span's context. */
  async function callInAppSpan(client: McpClient) {
    const step = otel.tracerProvider.getTracer("app").startSpan("agent step");
    await context.with(trace.setSpan(context.active(), step), () => client.callTool("traced", {}));
    step.end();
    return step.spanContext();
  }

  it("should send the active context and record nothing of its own in propagate mode", async () => {
    const client = await McpClient.connect(mounted.url, {
      era: "modern",
      eraCache: new Map(),
      cache: false,
      telemetry: { mode: "propagate", ...otel.providers },
    });
    otel.reset();
    try {
      const step = await callInAppSpan(client);
      await expect.poll(() => otel.named("tools/call traced").length).toBe(1);
      const served = otel.named("tools/call traced")[0]!;
      expect(served.kind).toBe(SpanKind.SERVER);
      expect(served.spanContext().traceId).toBe(step.traceId);
      expect(served.parentSpanContext?.spanId).toBe(step.spanId);
      // The app's two spans and the server's; none of the client's.
      expect(
        otel
          .spans()
          .map((span) => [span.name, span.kind])
          .sort(),
      ).toEqual([
        ["agent step", SpanKind.INTERNAL],
        ["inner work", SpanKind.INTERNAL],
        ["tools/call traced", SpanKind.SERVER],
      ]);
      expect(await otel.histogram("mcp.client.operation.duration")).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("should send no context and record nothing in mode off", async () => {
    const client = await McpClient.connect(mounted.url, {
      era: "modern",
      eraCache: new Map(),
      cache: false,
      telemetry: { mode: "off", ...otel.providers },
    });
    otel.reset();
    try {
      const step = await callInAppSpan(client);
      await expect.poll(() => otel.named("tools/call traced").length).toBe(1);
      const served = otel.named("tools/call traced")[0]!;
      expect(served.spanContext().traceId).not.toBe(step.traceId);
      expect(otel.spans().filter((span) => span.kind === SpanKind.CLIENT)).toEqual([]);
      expect(await otel.histogram("mcp.client.operation.duration")).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
