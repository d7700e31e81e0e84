import type { Attributes, Context, Link, SpanKind } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, VERSION } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { failOnUnhandled } from "../helpers/unhandled.js";
import { SpyTracerProvider } from "./spy-tracer.js";

/** What the sampler sees of a tools/call: its method, tool and operation, nothing more. */
const ECHO_AT_START = {
  "mcp.method.name": "tools/call",
  "gen_ai.tool.name": "echo",
  "gen_ai.operation.name": "execute_tool",
};

/** A server whose tools cover each outcome: a result, an isError result, a thrown error. */
function outcomesServer() {
  const server = createFixtureServer();
  server.tool({ name: "failing" }, () => ({
    content: [{ type: "text", text: "no" }],
    isError: true,
  }));
  return server;
}

// A span the registered SDK's sampler drops gets nothing built for it: no attributes past those
// the sampler is given at start, no events, no status; the duration metric is recorded in full.
describe("a span the sampler drops", () => {
  failOnUnhandled();
  const otel = new TestOtel();
  const spy = new SpyTracerProvider();
  let mounted: Mounted;
  beforeAll(async () => {
    const telemetry = { tracerProvider: spy, meterProvider: otel.meterProvider };
    mounted = await mount("node", createMcpHandler(outcomesServer(), { telemetry }));
  });
  afterAll(() => mounted.close());
  beforeEach(() => spy.reset());

  it("should be started with the sampler's attributes only and described no further, on every outcome", async () => {
    await call(mounted.send, "tools/call", { name: "echo", arguments: { text: "hi" } }, { id: 7 });
    await call(mounted.send, "tools/call", { name: "failing", arguments: {} });
    await call(mounted.send, "tools/call", { name: "throws", arguments: {} });
    await call(mounted.send, "tools/call", { name: "missing", arguments: {} });
    const confirm = { name: "confirm", arguments: { item: "a" } };
    const asked = await call(mounted.send, "tools/call", confirm, {
      capabilities: { elicitation: {} },
    });
    expect(asked.result.resultType).toBe("input_required");
    await call(mounted.send, "tools/list");
    await expect.poll(() => spy.spans.filter((span) => span.ended).length).toBe(6);
    expect(spy.spans.map((span) => span.calls)).toEqual([[], [], [], [], [], []]);
    expect(spy.named("tools/call echo")[0]!.startAttributes).toEqual(ECHO_AT_START);
    expect(spy.named("tools/list")[0]!.startAttributes).toEqual({
      "mcp.method.name": "tools/list",
    });
  });

  it("should still record the duration metric with its attributes and outcome", async () => {
    await call(mounted.send, "tools/call", { name: "failing", arguments: {} });
    await expect.poll(() => spy.spans.filter((span) => span.ended).length).toBe(1);
    const points = await otel.histogram("mcp.server.operation.duration");
    expect(points.map((point) => point.attributes)).toContainEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "failing",
      "gen_ai.operation.name": "execute_tool",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "network.protocol.version": "1.1",
      "mcp.protocol.version": VERSION,
      "error.type": "tool_error",
    });
  });

  it("should describe no dropped span of the client, which still records its metric", async () => {
    const client = await McpClient.connect(mounted.url, {
      era: "modern",
      eraCache: new Map(),
      cache: false,
      telemetry: { tracerProvider: spy, meterProvider: otel.meterProvider },
    });
    try {
      spy.reset();
      await client.callTool("echo", { text: "hi" });
      // The server's SERVER span, the client's call (INTERNAL) and its round (CLIENT).
      await expect.poll(() => spy.spans.filter((span) => span.ended).length).toBe(3);
      expect(spy.spans.map((span) => span.calls)).toEqual([[], [], []]);
      const port = Number(new URL(mounted.url).port);
      expect(spy.named("tools/call echo").map((span) => span.startAttributes)).toContainEqual({
        ...ECHO_AT_START,
        "server.address": "127.0.0.1",
        "server.port": port,
      });
      const points = await otel.histogram("mcp.client.operation.duration");
      expect(points.map((point) => point.attributes["gen_ai.tool.name"])).toContain("echo");
    } finally {
      await client.close();
    }
  });
});

/** A sampler that drops one tool's calls and keeps the rest, noting what it was shown. */
class DropOneTool implements Sampler {
  readonly seen = new Map<string, Attributes>();
  constructor(readonly dropped: string) {}
  shouldSample(
    _context: Context,
    _traceId: string,
    name: string,
    _kind: SpanKind,
    attributes: Attributes,
    _links: Link[],
  ): SamplingResult {
    this.seen.set(name, { ...attributes });
    const drop = attributes["gen_ai.tool.name"] === this.dropped;
    return { decision: drop ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED };
  }
}

// With a real SDK: the sampler decides on the start attributes, a kept span has them all.
describe("sampling with a real SDK", () => {
  failOnUnhandled();
  const otel = new TestOtel();
  const sampler = new DropOneTool("failing");
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    sampler,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  let mounted: Mounted;
  beforeAll(async () => {
    const telemetry = { tracerProvider, meterProvider: otel.meterProvider };
    mounted = await mount("node", createMcpHandler(outcomesServer(), { telemetry }));
  });
  afterAll(() => mounted.close());

  it("should decide on method and tool, export the kept span in full and the dropped not at all", async () => {
    await call(mounted.send, "tools/call", { name: "failing", arguments: {} });
    await call(mounted.send, "tools/call", { name: "echo", arguments: { text: "hi" } }, { id: 3 });
    await expect.poll(() => exporter.getFinishedSpans().length).toBe(1);
    const [kept] = exporter.getFinishedSpans();
    expect(kept!.name).toBe("tools/call echo");
    expect(kept!.attributes).toMatchObject({ ...ECHO_AT_START, "jsonrpc.request.id": "3" });
    expect(sampler.seen.get("tools/call failing")).toEqual({
      ...ECHO_AT_START,
      "gen_ai.tool.name": "failing",
    });
    const points = await otel.histogram("mcp.server.operation.duration");
    const tools = points.map((point) => point.attributes["gen_ai.tool.name"]);
    expect(tools).toEqual(expect.arrayContaining(["echo", "failing"]));
  });
});
