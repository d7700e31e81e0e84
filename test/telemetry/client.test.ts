import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { McpClient, type McpClientOptions } from "../../src/client/index.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

/** The one ended span named `name` of `kind`. */
async function only(otel: TestOtel, name: string, kind: SpanKind): Promise<ReadableSpan> {
  const matching = () => otel.named(name).filter((span) => span.kind === kind);
  await expect.poll(() => matching().length).toBe(1);
  return matching()[0]!;
}

/** Asserts `child` is a child of `parent`, in its trace. */
function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

// The client's CLIENT spans, against our server traced into the same SDK on a real port: every
// request's SERVER span is the child of the CLIENT span that sent it, in both eras.
describe.each(["modern", "legacy"] as const)("McpClient CLIENT spans (%s era)", (era) => {
  failOnUnhandled();
  const otel = new TestOtel();
  const server = createFixtureServer();
  server.tool({ name: "failing" }, () => ({
    content: [{ type: "text", text: "no" }],
    isError: true,
  }));
  let mounted: Mounted;
  let client: McpClient;
  let port: number;
  const connect = (options: McpClientOptions = {}) =>
    McpClient.connect(mounted.url, {
      era,
      eraCache: new Map(),
      cache: false,
      telemetry: otel.providers,
      ...options,
    });
  beforeAll(async () => {
    const mcp = createMcpHandler(server, { legacy: true, telemetry: otel.providers });
    mounted = await mount("node", mcp);
    port = Number(new URL(mounted.url).port);
    client = await connect();
  });
  afterAll(async () => {
    await client.close();
    await mounted.close();
  });
  beforeEach(() => otel.reset());
  afterEach(() => otel.reset());

  /** What every CLIENT span of this era carries, beyond its method's attributes. */
  const destination = () => ({
    "network.transport": "tcp",
    "network.protocol.name": "http",
    "server.address": "127.0.0.1",
    "server.port": port,
    "mcp.protocol.version": client.protocolVersion,
  });

  it("should make the SERVER span of tools/call the child of its CLIENT span", async () => {
    await client.callTool("echo", { text: "hi" });
    const sent = await only(otel, "tools/call echo", SpanKind.CLIENT);
    const served = await only(otel, "tools/call echo", SpanKind.SERVER);
    expectChild(served, sent);
    expect(sent.attributes).toEqual({
      ...destination(),
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": expect.any(String),
      ...(era === "modern"
        ? { "mcp_mount.round": 1 }
        : { "mcp.session.id": served.attributes["mcp.session.id"] }),
    });
    expect(sent.attributes["jsonrpc.request.id"]).toBe(served.attributes["jsonrpc.request.id"]);
    expect(sent.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("should nest the calls under the app's span, the trace running into the server", async () => {
    const tracer = otel.tracerProvider.getTracer("app");
    const app = tracer.startSpan("app work");
    await context.with(trace.setSpan(context.active(), app), () =>
      client.callTool("echo", { text: "in the app" }),
    );
    app.end();
    const appSpan = otel.named("app work")[0]!;
    const sent = await only(otel, "tools/call echo", SpanKind.CLIENT);
    expectChild(await only(otel, "tools/call echo", SpanKind.SERVER), sent);
    // Modern: the call's span (its rounds under it) is the app span's child; legacy: the request's.
    const call = era === "modern" ? await only(otel, "tools/call echo", SpanKind.INTERNAL) : sent;
    expectChild(call, appSpan);
    if (era === "modern") expectChild(sent, call);
  });

  it("should name prompts/get after the prompt, and resources/read without the URI", async () => {
    await client.getPrompt("greet", { who: "bob" });
    await client.readResource("test://static");
    const prompt = await only(otel, "prompts/get greet", SpanKind.CLIENT);
    expect(prompt.attributes).toMatchObject({
      "mcp.method.name": "prompts/get",
      "gen_ai.prompt.name": "greet",
    });
    expect(prompt.attributes["gen_ai.operation.name"]).toBeUndefined();
    const read = await only(otel, "resources/read", SpanKind.CLIENT);
    expect(read.attributes).toMatchObject({
      ...destination(),
      "mcp.method.name": "resources/read",
      "mcp.resource.uri": "test://static",
    });
    expectChild(await only(otel, "resources/read", SpanKind.SERVER), read);
  });

  it("should mark a JSON-RPC error on both sides: error.type, status code, status ERROR", async () => {
    const failed = await client.getPrompt("no-such-prompt").catch((error: Error) => error);
    expect(failed).toBeInstanceOf(Error);
    const sent = await only(otel, "prompts/get no-such-prompt", SpanKind.CLIENT);
    const served = await only(otel, "prompts/get no-such-prompt", SpanKind.SERVER);
    expectChild(served, sent);
    const code = String((failed as Error & { code: number }).code);
    for (const span of [sent, served]) {
      expect(span.attributes["error.type"]).toBe(code);
      expect(span.attributes["rpc.response.status_code"]).toBe(code);
      expect(span.status).toEqual({
        code: SpanStatusCode.ERROR,
        message: (failed as Error).message,
      });
    }
  });

  it("should give a tool result with isError the error.type tool_error", async () => {
    const result = await client.callTool("failing");
    expect(result.isError).toBe(true);
    const sent = await only(otel, "tools/call failing", SpanKind.CLIENT);
    expect(sent.attributes["error.type"]).toBe("tool_error");
    expect(sent.attributes["rpc.response.status_code"]).toBeUndefined();
    expect(sent.status.code).toBe(SpanStatusCode.ERROR);
    const served = await only(otel, "tools/call failing", SpanKind.SERVER);
    expect(served.attributes["error.type"]).toBe("tool_error");
  });

  it("should record nothing with telemetry: false, and send no trace context", async () => {
    const quiet = await connect({ telemetry: false });
    await quiet.callTool("echo", { text: "quiet" });
    const served = await only(otel, "tools/call echo", SpanKind.SERVER);
    expect(served.parentSpanContext).toBeUndefined();
    expect(otel.spans().filter((span) => span.kind !== SpanKind.SERVER)).toEqual([]);
    await quiet.close();
  });
});

// The conventions' metric: low-cardinality attributes only (no request id, URI or session).
describe("mcp.client.operation.duration", () => {
  const otel = new TestOtel();
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount("node", createMcpHandler(createFixtureServer(), { legacy: true }));
  });
  afterAll(() => mounted.close());

  it("should record each request with the conventions' attributes, in seconds", async () => {
    const client = await McpClient.connect(mounted.url, {
      era: "legacy",
      eraCache: new Map(),
      cache: false,
      telemetry: otel.providers,
    });
    await client.callTool("echo", { text: "hi" });
    await client.readResource("test://static");
    await client.getPrompt("no-such-prompt").catch(() => {});
    await client.close();
    const points = await otel.histogram("mcp.client.operation.duration");
    const allowed = new Set([
      "mcp.method.name",
      "error.type",
      "gen_ai.tool.name",
      "gen_ai.prompt.name",
      "gen_ai.operation.name",
      "rpc.response.status_code",
      "mcp.protocol.version",
      "network.transport",
      "network.protocol.name",
      "server.address",
      "server.port",
    ]);
    for (const point of points) {
      for (const key of Object.keys(point.attributes)) expect(allowed).toContain(key);
    }
    const port = Number(new URL(mounted.url).port);
    const call = points.find((point) => point.attributes["gen_ai.tool.name"] === "echo");
    expect(call?.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "mcp.protocol.version": "2025-11-25",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "server.address": "127.0.0.1",
      "server.port": port,
    });
    expect(call?.value.count).toBe(1);
    expect(call?.value.sum).toBeGreaterThan(0);
    expect(call?.value.sum).toBeLessThan(10);
    const read = points.find((point) => point.attributes["mcp.method.name"] === "resources/read");
    expect(read?.attributes["mcp.resource.uri"]).toBeUndefined();
    const failed = points.find((point) => point.attributes["error.type"] !== undefined);
    expect(failed?.attributes).toMatchObject({
      "mcp.method.name": "prompts/get",
      "gen_ai.prompt.name": "no-such-prompt",
      "rpc.response.status_code": failed?.attributes["error.type"],
    });
    const methods = points.map((point) => point.attributes["mcp.method.name"]);
    expect(methods).toEqual(expect.arrayContaining(["initialize", "notifications/initialized"]));
  });
});
