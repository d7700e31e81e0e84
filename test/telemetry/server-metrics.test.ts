import { metrics, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { LEGACY_VERSION, legacyCall, openSession } from "../helpers/legacy.js";
import { call, VERSION, viaFetch } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";

const DURATION = "mcp.server.operation.duration";
/** Attributes too many-valued for a metric (conventions: metrics leave them out). */
const HIGH_CARDINALITY = [
  "jsonrpc.request.id",
  "mcp.session.id",
  "mcp.resource.uri",
  "client.address",
  "client.port",
];

// mcp.server.operation.duration, and where spans go by default (the global providers) or not at
// all (`telemetry: false`).
describe("mcp.server.operation.duration", () => {
  const otel = new TestOtel();
  let mounted: Mounted;
  beforeAll(async () => {
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s", telemetry: otel.providers });
    mounted = await mount("node", mcp);
  });
  afterAll(() => mounted.close());

  /** The data points of the histogram whose method (and tool) match. */
  const pointsOf = async (method: string) =>
    (await otel.histogram(DURATION)).filter(
      (point) => point.attributes["mcp.method.name"] === method,
    );

  it("should record a modern tools/call with the conventions' attributes, in seconds", async () => {
    await call(mounted.send, "tools/call", { name: "echo", arguments: { text: "a" } });
    await call(mounted.send, "tools/call", { name: "echo", arguments: { text: "b" } });
    const [point, ...others] = await pointsOf("tools/call");
    expect(others).toEqual([]);
    expect(point?.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "mcp.protocol.version": VERSION,
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "network.protocol.version": "1.1",
    });
    expect(point?.value.count).toBe(2);
    expect(point?.value.sum).toBeGreaterThan(0);
    expect(point?.value.sum).toBeLessThan(5);
    expect(point?.value.buckets.boundaries).toEqual([
      0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
    ]);
  });

  it("should record errors with error.type and rpc.response.status_code", async () => {
    await call(mounted.send, "tools/call", { name: "nope", arguments: {} });
    await call(mounted.send, "tools/call", { name: "throws", arguments: {} });
    const points = (await pointsOf("tools/call")).map((point) => point.attributes);
    expect(points).toContainEqual(
      expect.objectContaining({
        "gen_ai.tool.name": "nope",
        "error.type": "-32602",
        "rpc.response.status_code": "-32602",
      }),
    );
    const toolError = points.find((attributes) => attributes["gen_ai.tool.name"] === "throws");
    expect(toolError).toMatchObject({ "error.type": "tool_error" });
    expect(toolError?.["rpc.response.status_code"]).toBeUndefined();
  });

  it("should leave out the request id, session, resource URI and client address", async () => {
    const session = await openSession(mounted.send);
    await legacyCall(mounted.send, session, "resources/read", { uri: "test://static" });
    await legacyCall(mounted.send, session, "resources/subscribe", { uri: "test://static" });
    await call(mounted.send, "resources/read", { uri: "test://items/1" });
    const points = await otel.histogram(DURATION);
    expect(points.length).toBeGreaterThan(4);
    for (const { attributes } of points)
      for (const key of HIGH_CARDINALITY) expect(attributes).not.toHaveProperty(key);
    const versions = (await pointsOf("resources/read")).map(
      (point) => point.attributes["mcp.protocol.version"],
    );
    expect(versions.sort()).toEqual([LEGACY_VERSION, VERSION]);
    expect((await pointsOf("resources/subscribe"))[0]?.attributes).toMatchObject({
      "mcp.protocol.version": LEGACY_VERSION,
    });
    // gen_ai.operation.name belongs to tools/call alone.
    for (const { attributes } of points)
      if (attributes["mcp.method.name"] !== "tools/call")
        expect(attributes).not.toHaveProperty("gen_ai.operation.name");
  });
});

describe("telemetry with an SDK registered after traffic began", () => {
  const otel = new TestOtel();
  const other = new TestOtel();
  afterAll(() => {
    trace.disable();
    metrics.disable();
  });

  it("should record from the next message on, stop when the SDK is disabled, and record into the next one", async () => {
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s" });
    const send = viaFetch(mcp.fetch);
    const echo = () => call(send, "tools/call", { name: "echo", arguments: { text: "x" } });
    await echo();
    trace.setGlobalTracerProvider(otel.tracerProvider);
    metrics.setGlobalMeterProvider(otel.meterProvider);
    await echo();
    expect(otel.named("tools/call echo")).toHaveLength(1);
    expect((await otel.histogram(DURATION))[0]?.value.count).toBe(1);
    trace.disable();
    metrics.disable();
    await echo();
    expect(otel.named("tools/call echo")).toHaveLength(1);
    expect((await otel.histogram(DURATION))[0]?.value.count).toBe(1);
    // Another SDK in its place gets the spans and metrics from then on.
    trace.setGlobalTracerProvider(other.tracerProvider);
    metrics.setGlobalMeterProvider(other.meterProvider);
    await echo();
    await mcp.close();
    expect(other.named("tools/call echo")).toHaveLength(1);
    expect((await other.histogram(DURATION))[0]?.value.count).toBe(1);
    expect(otel.named("tools/call echo")).toHaveLength(1);
  });
});

describe("telemetry with the global providers", () => {
  const otel = new TestOtel();
  beforeAll(() => {
    trace.setGlobalTracerProvider(otel.tracerProvider);
    metrics.setGlobalMeterProvider(otel.meterProvider);
  });
  afterAll(() => {
    trace.disable();
    metrics.disable();
  });

  it("should use the SDK an app registered, with no option", async () => {
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s" });
    await call(viaFetch(mcp.fetch), "tools/call", { name: "echo", arguments: { text: "x" } });
    await mcp.close();
    expect(otel.named("tools/call echo")).toHaveLength(1);
    expect(await otel.histogram(DURATION)).toHaveLength(1);
  });

  it("should record nothing with telemetry: false", async () => {
    otel.reset();
    const before = (await otel.histogram(DURATION))[0]?.value.count;
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s", telemetry: false });
    const send = viaFetch(mcp.fetch);
    await call(send, "tools/call", { name: "echo", arguments: { text: "x" } });
    await openSession(send);
    await mcp.close();
    expect(otel.spans()).toEqual([]);
    expect((await otel.histogram(DURATION))[0]?.value.count).toBe(before);
  });
});
