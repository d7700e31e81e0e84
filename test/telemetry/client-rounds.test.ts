import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

/** The ended spans named `name` of `kind`, once `count` of them ended. */
async function spans(
  otel: TestOtel,
  name: string,
  kind: SpanKind,
  count: number,
): Promise<ReadableSpan[]> {
  const matching = () => otel.named(name).filter((span) => span.kind === kind);
  await expect.poll(() => matching().length).toBe(count);
  return matching();
}

/** The span whose `jsonrpc.request.id` is `id`. */
function byRequestId(list: ReadableSpan[], id: unknown): ReadableSpan {
  const found = list.find((span) => span.attributes["jsonrpc.request.id"] === id);
  expect(found, `no span of request ${String(id)}`).toBeDefined();
  return found!;
}

// A multi round-trip call is one logical call: one INTERNAL span for it, a CLIENT span per round
// under it, and each round's SERVER span the child of its round's CLIENT span, all in one trace.
// Through a real socket and through mcp.fetch (the edge path, no socket).
describe.each(["node", "fetch"] as const)("MRTR rounds of one call, through %s", (transport) => {
  failOnUnhandled();
  const otel = new TestOtel();
  let mcp: McpHandler;
  let mounted: Mounted;
  let client: McpClient;
  beforeAll(async () => {
    mcp = createMcpHandler(createFixtureServer(), {
      secret: "client-telemetry",
      telemetry: otel.providers,
    });
    mounted = await mount(transport, mcp);
    client = await McpClient.connect(mounted.url, {
      era: "modern",
      eraCache: new Map(),
      telemetry: otel.providers,
      onInput: { elicitation: async () => ({ action: "accept", content: { ok: true } }) },
      ...(transport === "fetch"
        ? { fetch: (input, init) => mcp.fetch(new Request(input, init)) }
        : {}),
    });
  });
  afterAll(async () => {
    await client.close();
    await mounted.close();
  });
  beforeEach(() => otel.reset());

  it("should trace the elicitation round trip and its retry as one trace under the call", async () => {
    const result = await client.callTool("confirm", { item: "file.txt" });
    expect(result.structuredContent ?? result.content).toBeDefined();
    const [call] = await spans(otel, "tools/call confirm", SpanKind.INTERNAL, 1);
    const rounds = await spans(otel, "tools/call confirm", SpanKind.CLIENT, 2);
    const served = await spans(otel, "tools/call confirm", SpanKind.SERVER, 2);
    const traceId = call!.spanContext().traceId;
    for (const span of [...rounds, ...served]) expect(span.spanContext().traceId).toBe(traceId);
    expect(call!.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "confirm",
      "gen_ai.operation.name": "execute_tool",
      "mcp_mount.round": 2,
    });
    const [first, second] = [...rounds].sort(
      (a, b) => Number(a.attributes["mcp_mount.round"]) - Number(b.attributes["mcp_mount.round"]),
    );
    expect(first!.attributes).toMatchObject({
      "mcp_mount.round": 1,
      "mcp_mount.result_type": "input_required",
    });
    expect(second!.attributes["mcp_mount.round"]).toBe(2);
    expect(second!.attributes["mcp_mount.result_type"]).toBeUndefined();
    expect(first!.attributes["jsonrpc.request.id"]).not.toBe(
      second!.attributes["jsonrpc.request.id"],
    );
    for (const round of [first!, second!]) {
      expect(round.parentSpanContext?.spanId).toBe(call!.spanContext().spanId);
      const answered = byRequestId(served, round.attributes["jsonrpc.request.id"]);
      expect(answered.parentSpanContext?.spanId).toBe(round.spanContext().spanId);
      expect(answered.attributes["mcp_mount.round"]).toBe(round.attributes["mcp_mount.round"]);
    }
  });

  it("should record each round in mcp.client.operation.duration, not the call", async () => {
    const before = await otel.histogram("mcp.client.operation.duration");
    const count = (points: typeof before) =>
      points
        .filter((point) => point.attributes["gen_ai.tool.name"] === "confirm")
        .reduce((sum, point) => sum + point.value.count, 0);
    await client.callTool("confirm", { item: "again.txt" });
    const after = await otel.histogram("mcp.client.operation.duration");
    expect(count(after) - count(before)).toBe(2);
    for (const point of after) expect(point.attributes["mcp_mount.round"]).toBeUndefined();
  });

  it("should keep a call that needs no input to one round under its call span", async () => {
    await client.callTool("echo", { text: "once" });
    const [call] = await spans(otel, "tools/call echo", SpanKind.INTERNAL, 1);
    const [round] = await spans(otel, "tools/call echo", SpanKind.CLIENT, 1);
    const [served] = await spans(otel, "tools/call echo", SpanKind.SERVER, 1);
    expect(call!.attributes["mcp_mount.round"]).toBe(1);
    expect(round!.parentSpanContext?.spanId).toBe(call!.spanContext().spanId);
    expect(served!.parentSpanContext?.spanId).toBe(round!.spanContext().spanId);
  });
});
