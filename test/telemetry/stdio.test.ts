import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { TestOtel } from "../helpers/otel.js";
import { stdioPipes } from "../helpers/stdio-pipes.js";

const otel = new TestOtel();
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

/** The fixture server on pipes, traced into the suite's SDK (or not, with `telemetry: false`). */
function traced(telemetry: false | undefined = undefined) {
  const pipes = stdioPipes(undefined, { telemetry: telemetry ?? otel.providers });
  const answer = (id: unknown) => pipes.waitFor((line) => line.id === id);
  return { ...pipes, answer };
}

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: {} },
    clientInfo: { name: "test", version: "1" },
  },
};

describe("telemetry over stdio", () => {
  afterEach(() => otel.reset());

  it("should give each message a SERVER span with network.transport pipe, its parent from _meta", async () => {
    const { running, send, answer } = traced();
    send(initialize);
    await answer(0);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" }, _meta: { traceparent: PARENT } },
    });
    await answer(1);
    await expect.poll(() => otel.named("tools/call echo").length).toBe(1);
    const call = otel.named("tools/call echo")[0]!;
    expect(call.kind).toBe(SpanKind.SERVER);
    expect(call.spanContext().traceId).toBe(TRACE_ID);
    expect(call.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(call.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "1",
      "mcp.protocol.version": "2025-11-25",
      "network.transport": "pipe",
    });
    expect(call.attributes["network.protocol.name"]).toBeUndefined();
    // Answered without the dispatcher, ended all the same.
    expect(otel.named("initialize")).toHaveLength(1);
    expect(otel.named("notifications/initialized")).toHaveLength(1);
    await running.close();
  });

  it("should record a JSON-RPC error and a tool error as the conventions say", async () => {
    const { running, send, answer } = traced();
    send(initialize);
    await answer(0);
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "nope" } });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "throws" } });
    await answer(2);
    await answer(3);
    await expect.poll(() => otel.spans().length).toBeGreaterThanOrEqual(3);
    const unknown = otel.named("tools/call nope")[0]!;
    expect(unknown.attributes["error.type"]).toBe("-32602");
    expect(unknown.attributes["rpc.response.status_code"]).toBe("-32602");
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);
    const thrown = otel.named("tools/call throws")[0]!;
    expect(thrown.attributes["error.type"]).toBe("tool_error");
    expect(thrown.status.code).toBe(SpanStatusCode.ERROR);
    await running.close();
  });

  it("should trace a server request to the client as a CLIENT span with traceparent in its _meta", async () => {
    const { running, lines, send, answer } = traced();
    send(initialize);
    await answer(0);
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "confirm" } });
    await expect
      .poll(() => lines.find((line) => line.method === "elicitation/create"))
      .toBeDefined();
    const asked = lines.find((line) => line.method === "elicitation/create")!;
    const meta = (asked.params as { _meta?: { traceparent?: string } })._meta;
    expect(meta?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    send({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { ok: true } } });
    await answer(4);
    await expect.poll(() => otel.named("elicitation/create").length).toBe(1);
    const elicit = otel.named("elicitation/create")[0]!;
    const call = otel.named("tools/call confirm")[0]!;
    expect(elicit.kind).toBe(SpanKind.CLIENT);
    expect(elicit.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(meta?.traceparent).toContain(elicit.spanContext().spanId);
    expect(elicit.attributes["network.transport"]).toBe("pipe");
    // The id we gave the server request, as the conventions require on a request's span.
    expect(elicit.attributes["jsonrpc.request.id"]).toBe(String(asked.id));
    await running.close();
  });

  it("should record nothing with telemetry: false", async () => {
    const { running, send, answer } = traced(false);
    send(initialize);
    await answer(0);
    send({ jsonrpc: "2.0", id: 5, method: "ping" });
    await answer(5);
    expect(otel.spans()).toHaveLength(0);
    await running.close();
  });
});
