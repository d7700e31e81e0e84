import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { context, propagation, SpanKind, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, type Send, viaFetch, viaUrl } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const otel = new TestOtel();
const tracer = otel.tracerProvider.getTracer("app");

/** The one ended span named `name`. */
async function only(name: string): Promise<ReadableSpan> {
  await expect.poll(() => otel.named(name).length).toBe(1);
  return otel.named(name)[0]!;
}

/** The fixture server, plus a tool that starts a span of its own and reads the baggage. */
function tracedServer() {
  const server = createFixtureServer();
  server.tool({ name: "traced" }, () => {
    const user = propagation.getBaggage(context.active())?.getEntry("user")?.value;
    tracer.startActiveSpan("inner work", (span) => span.end());
    return { user: user ?? null };
  });
  return server;
}

// The request span's place in a trace: its parent from params._meta, the HTTP span linked, the
// handler's spans under it, and the rounds of a multi round-trip request.
describe("the SERVER span's context", () => {
  let mcp: McpHandler;
  let http: Server;
  let send: Send;
  beforeAll(async () => {
    mcp = createMcpHandler(tracedServer(), { secret: "s", telemetry: otel.providers });
    const node = toNodeHandler(mcp);
    // What the HTTP instrumentation does: a SERVER span per request, active while it is handled.
    http = createServer((req, res) => {
      const span = tracer.startSpan(`${req.method} /mcp`, { kind: SpanKind.SERVER });
      res.on("close", () => span.end());
      context.with(trace.setSpan(context.active(), span), () => node(req, res));
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    send = viaUrl(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await mcp.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  beforeEach(() => otel.reset());

  it("should take its parent from params._meta and link the HTTP span, with baggage in the handler", async () => {
    const { result } = await call(
      send,
      "tools/call",
      { name: "traced", arguments: {} },
      { meta: { traceparent: TRACEPARENT, baggage: "user=alice" } },
    );
    expect(result.structuredContent).toEqual({ user: "alice" });
    const span = await only("tools/call traced");
    const httpSpan = await only("POST /mcp");
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext).toMatchObject({ spanId: CALLER_SPAN, isRemote: true });
    expect(span.links.map((link) => link.context.spanId)).toEqual([httpSpan.spanContext().spanId]);
  });

  it("should be the parent of the spans its handler starts", async () => {
    await call(send, "tools/call", { name: "traced", arguments: {} });
    const span = await only("tools/call traced");
    const inner = await only("inner work");
    expect(inner.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    expect(inner.spanContext().traceId).toBe(span.spanContext().traceId);
  });

  it("should be a child of the HTTP span when the message carries no context", async () => {
    await call(send, "tools/list");
    const span = await only("tools/list");
    const httpSpan = await only("POST /mcp");
    expect(span.parentSpanContext?.spanId).toBe(httpSpan.spanContext().spanId);
    expect(span.links).toEqual([]);
  });

  it("should ignore a malformed traceparent and stay under the HTTP span", async () => {
    await call(send, "tools/list", {}, { meta: { traceparent: "00-nothex-01" } });
    const span = await only("tools/list");
    const httpSpan = await only("POST /mcp");
    expect(span.parentSpanContext?.spanId).toBe(httpSpan.spanContext().spanId);
  });

  it("should number the rounds of a multi round-trip request and link each to the one before", async () => {
    const elicitation = { capabilities: { elicitation: {} }, meta: { traceparent: TRACEPARENT } };
    const first = await call(
      send,
      "tools/call",
      { name: "confirm", arguments: { item: "a" } },
      elicitation,
    );
    expect(first.result.resultType).toBe("input_required");
    const round1 = await only("tools/call confirm");
    expect(round1.attributes).toMatchObject({
      "mcp_mount.round": 1,
      "mcp_mount.input_keys": ["confirm"],
      "mcp_mount.result_type": "input_required",
    });
    expect(round1.attributes["error.type"]).toBeUndefined();
    otel.reset();
    const second = await call(
      send,
      "tools/call",
      {
        name: "confirm",
        arguments: { item: "a" },
        inputResponses: { confirm: { action: "accept", content: { ok: true } } },
        requestState: first.result.requestState,
      },
      elicitation,
    );
    expect(second.result.structuredContent).toMatchObject({ action: "accept", rounds: 2 });
    const round2 = await only("tools/call confirm");
    expect(round2.attributes["mcp_mount.round"]).toBe(2);
    expect(round2.attributes["mcp_mount.result_type"]).toBeUndefined();
    expect(round2.attributes["mcp_mount.input_keys"]).toBeUndefined();
    expect(round2.spanContext().traceId).toBe(TRACE_ID);
    const linked = round2.links.map((link) => link.context.spanId);
    expect(linked).toContain(round1.spanContext().spanId);
  });

  it("should give the same spans through fetch (the edge path), with no HTTP span to link", async () => {
    const { result } = await call(
      viaFetch(mcp.fetch),
      "tools/call",
      { name: "traced", arguments: {} },
      { meta: { traceparent: TRACEPARENT } },
    );
    expect(result.structuredContent).toEqual({ user: null });
    const span = await only("tools/call traced");
    expect(span.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(span.links).toEqual([]);
    expect((await only("inner work")).parentSpanContext?.spanId).toBe(span.spanContext().spanId);
  });
});

describe("the SERVER span's client.address", () => {
  const server = tracedServer();
  beforeEach(() => otel.reset());

  it("should be the address the host gives the fetch handler", async () => {
    const mcp = createMcpHandler(server, { secret: "s", telemetry: otel.providers });
    const send: Send = async (request) => {
      const response = await mcp.fetch(new Request("http://127.0.0.1/mcp", request), {
        remoteAddress: "198.51.100.7",
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };
    await call(send, "tools/list");
    await mcp.close();
    expect((await only("tools/list")).attributes["client.address"]).toBe("198.51.100.7");
  });

  it("should be the client's behind a trusted proxy (trustProxy), not the proxy's", async () => {
    const mcp = createMcpHandler(server, { secret: "s", telemetry: otel.providers, trustProxy: 1 });
    const send = viaFetch(mcp.fetch);
    await call(send, "tools/list", {}, { headers: { "x-forwarded-for": "203.0.113.9" } });
    await mcp.close();
    expect((await only("tools/list")).attributes["client.address"]).toBe("203.0.113.9");
  });
});
