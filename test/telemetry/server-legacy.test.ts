import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createMcpHandler, memoryStore } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { LEGACY_VERSION, legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { TestOtel } from "../helpers/otel.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount } from "../helpers/transports.js";

/** The one ended span named `name`. */
async function only(otel: TestOtel, name: string): Promise<ReadableSpan> {
  await expect.poll(() => otel.named(name).length).toBe(1);
  return otel.named(name)[0]!;
}

// SERVER spans of the legacy era (sessions over HTTP): every message in a session says so.
describe("legacy SERVER spans", () => {
  const otel = new TestOtel();
  let mounted: Mounted;
  let session: string;
  beforeAll(async () => {
    const mcp = createMcpHandler(createFixtureServer(), { telemetry: otel.providers });
    mounted = await mount("node", mcp);
    session = await openSession(mounted.send, { elicitation: {} });
  });
  afterAll(() => mounted.close());
  beforeEach(() => otel.reset());

  /** What every span of a message in the session carries. */
  const inSession = () => ({
    "mcp.session.id": session,
    "mcp.protocol.version": LEGACY_VERSION,
    "mcp_mount.era": "legacy",
    "network.transport": "tcp",
    "network.protocol.name": "http",
    "network.protocol.version": "1.1",
    "client.address": "127.0.0.1",
    "client.port": expect.any(Number),
  });

  it("should trace initialize and notifications/initialized with the session they open", async () => {
    const opened = await openSession(mounted.send);
    const initialize = await only(otel, "initialize");
    expect(initialize.kind).toBe(SpanKind.SERVER);
    expect(initialize.attributes).toMatchObject({
      "mcp.method.name": "initialize",
      "mcp.session.id": opened,
      "mcp.protocol.version": LEGACY_VERSION,
    });
    expect(initialize.attributes["jsonrpc.request.id"]).toEqual(expect.any(String));
    const initialized = await only(otel, "notifications/initialized");
    expect(initialized.attributes).toEqual({
      ...inSession(),
      "mcp.session.id": opened,
      "mcp.method.name": "notifications/initialized",
    });
  });

  it.each([
    ["ping", undefined, {}],
    ["logging/setLevel", { level: "warning" }, {}],
    ["resources/subscribe", { uri: "test://static" }, { "mcp.resource.uri": "test://static" }],
    ["resources/unsubscribe", { uri: "test://static" }, { "mcp.resource.uri": "test://static" }],
    ["resources/read", { uri: "test://static" }, { "mcp.resource.uri": "test://static" }],
    ["tools/list", {}, {}],
    ["prompts/list", {}, {}],
    ["resources/list", {}, {}],
    ["resources/templates/list", {}, {}],
    [
      "completion/complete",
      { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "a" } },
      {},
    ],
  ])("should trace %s in the session", async (method, params, extra) => {
    const { status, response } = await legacyCall(mounted.send, session, method, params);
    expect(status).toBe(200);
    const span = await only(otel, method);
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.attributes).toEqual({
      ...inSession(),
      ...extra,
      "mcp.method.name": method,
      "jsonrpc.request.id": String(response.id),
    });
  });

  it("should name tools/call and prompts/get after their target", async () => {
    await legacyCall(mounted.send, session, "tools/call", {
      name: "echo",
      arguments: { text: "x" },
    });
    await legacyCall(mounted.send, session, "prompts/get", {
      name: "greet",
      arguments: { who: "a" },
    });
    expect((await only(otel, "tools/call echo")).attributes).toMatchObject({
      ...inSession(),
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
    });
    const prompt = await only(otel, "prompts/get greet");
    expect(prompt.attributes).toMatchObject({ ...inSession(), "gen_ai.prompt.name": "greet" });
    expect(prompt.attributes["gen_ai.operation.name"]).toBeUndefined();
  });

  it("should trace notifications/cancelled, which has no request id", async () => {
    const answer = await mounted.send({
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 12345, reason: "test" },
      }),
    });
    expect(answer.status).toBe(202);
    const span = await only(otel, "notifications/cancelled");
    expect(span.attributes).toEqual({
      ...inSession(),
      "mcp.method.name": "notifications/cancelled",
    });
  });

  it.each([
    ["nothing/here", {}, -32601],
    ["logging/setLevel", { level: "loud" }, -32602],
  ])("should record %s's JSON-RPC error", async (method, params, code) => {
    const { error } = await legacyCall(mounted.send, session, method, params);
    expect(error?.code).toBe(code);
    const span = await only(otel, method);
    expect(span.attributes).toMatchObject({
      ...inSession(),
      "error.type": String(code),
      "rpc.response.status_code": String(code),
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: error!.message });
  });

  it("should send elicitation/create as a CLIENT span under tools/call, its traceparent in _meta", async () => {
    const response = await fetch(mounted.url, {
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "ask-1",
        method: "tools/call",
        params: { name: "confirm", arguments: { item: "x" } },
      }),
    });
    const reader = new SseReader(response.body!);
    const request = await reader.next();
    assertLegacyMessage(request, "tools/call");
    expect(request?.method).toBe("elicitation/create");
    const meta = (request?.params as { _meta?: { traceparent?: string } } | undefined)?._meta;
    const traceparent = meta?.traceparent;
    const answer = await mounted.send({
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: request?.id,
        result: { action: "accept", content: { ok: true } },
      }),
    });
    expect(answer.status).toBe(202);
    const final = await reader.next();
    assertLegacyMessage(final, "tools/call");
    expect(final).toMatchObject({
      id: "ask-1",
      result: { structuredContent: { action: "accept" } },
    });

    const call = await only(otel, "tools/call confirm");
    const ask = await only(otel, "elicitation/create");
    expect(ask.kind).toBe(SpanKind.CLIENT);
    expect(ask.attributes).toMatchObject({
      "mcp.method.name": "elicitation/create",
      "mcp.protocol.version": LEGACY_VERSION,
      "network.transport": "tcp",
      "jsonrpc.request.id": String(request?.id),
      "mcp.session.id": session,
    });
    expect(ask.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(ask.spanContext().traceId).toBe(call.spanContext().traceId);
    const { traceId, spanId } = ask.spanContext();
    expect(traceparent).toBe(`00-${traceId}-${spanId}-01`);
    // The client's answer is a response, not a message of its own: no SERVER span for it.
    expect(otel.spans().filter((span) => span.kind === SpanKind.SERVER)).toHaveLength(1);
  });
});

describe("legacy SERVER spans while the session store is down", () => {
  it("should record the 503 as an error of the request's span", async () => {
    const otel = new TestOtel();
    const store = memoryStore();
    let down = false;
    const { sessions } = store;
    const failing = {
      ...store,
      sessions: {
        create: sessions.create,
        get: (id: string) => (down ? Promise.reject(new Error("store down")) : sessions.get(id)),
        idleMs: sessions.idleMs,
        update: sessions.update,
        exists: sessions.exists,
        touch: (id: string) =>
          down ? Promise.reject(new Error("store down")) : sessions.touch(id),
        delete: sessions.delete,
        ofClient: sessions.ofClient,
        markActive: sessions.markActive,
        unmarkActive: sessions.unmarkActive,
        activeOwners: sessions.activeOwners,
      },
    };
    const mcp = createMcpHandler(createFixtureServer(), {
      telemetry: otel.providers,
      store: failing,
      onError: () => {},
    });
    const mounted = await mount("fetch", mcp);
    try {
      const session = await openSession(mounted.send);
      down = true;
      otel.reset();
      const refused = await mounted.send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(refused.status).toBe(503);
      const span = await only(otel, "tools/list");
      expect(span.attributes).toMatchObject({
        "mcp.session.id": session,
        "error.type": "-32603",
        "rpc.response.status_code": "-32603",
      });
      expect(span.status).toEqual({
        code: SpanStatusCode.ERROR,
        message: "Session store unavailable, retry shortly",
      });
    } finally {
      await mounted.close();
    }
  });
});
