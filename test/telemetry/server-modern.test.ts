import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, modernHeaders, modernMeta, type Send, VERSION } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount } from "../helpers/transports.js";

/** What every modern SERVER span over HTTP carries, whatever its method. */
const OVER_HTTP = {
  "network.transport": "tcp",
  "network.protocol.name": "http",
  "mcp.protocol.version": VERSION,
  "mcp_mount.era": "modern",
};

// SERVER spans of the modern era, per the MCP semantic conventions, through fetch (the edge path)
// and a real socket: the same spans either way.
describe.each(["fetch", "node"] as const)("modern SERVER spans through %s", (transport) => {
  const otel = new TestOtel();
  const server = createFixtureServer();
  server.tool({ name: "failing" }, () => ({
    content: [{ type: "text", text: "no" }],
    isError: true,
  }));
  server.method("fixture/broken", () => {
    throw new Error("database unavailable");
  });
  let mcp: McpHandler;
  let mounted: Mounted;
  let send: Send;
  beforeAll(async () => {
    mcp = createMcpHandler(server, { telemetry: otel.providers });
    mounted = await mount(transport, mcp);
    send = mounted.send;
  });
  afterAll(() => mounted.close());
  beforeEach(() => otel.reset());

  /** The one span named `name`, once it ended. */
  const only = async (name: string): Promise<ReadableSpan> => {
    await expect.poll(() => otel.named(name).length).toBe(1);
    const span = otel.named(name)[0]!;
    expect(span.kind).toBe(SpanKind.SERVER);
    return span;
  };
  // A socket tells the client's address and port and the HTTP version; a bare fetch call none.
  const clientAddress =
    transport === "node"
      ? {
          "client.address": "127.0.0.1",
          "client.port": expect.any(Number),
          "network.protocol.version": "1.1",
        }
      : {};

  it("should name tools/call after its tool, with the required and recommended attributes", async () => {
    const { result } = await call(
      send,
      "tools/call",
      { name: "echo", arguments: { text: "hi" } },
      {
        id: 7,
      },
    );
    expect(result.content).toEqual([{ type: "text", text: "hi" }]);
    const span = await only("tools/call echo");
    expect(span.attributes).toEqual({
      ...OVER_HTTP,
      ...clientAddress,
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "7",
      // Every modern tools/call may ask for input: it is round 1 of its multi round-trip request.
      "mcp_mount.round": 1,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.parentSpanContext).toBeUndefined();
  });

  it("should name prompts/get after its prompt", async () => {
    await call(send, "prompts/get", { name: "greet", arguments: { who: "bob" } }, { id: "p-1" });
    const span = await only("prompts/get greet");
    expect(span.attributes).toMatchObject({
      ...OVER_HTTP,
      "mcp.method.name": "prompts/get",
      "gen_ai.prompt.name": "greet",
      "jsonrpc.request.id": "p-1",
    });
    expect(span.attributes["gen_ai.operation.name"]).toBeUndefined();
  });

  it("should keep the resource URI out of the span name, as an attribute", async () => {
    await call(send, "resources/read", { uri: "test://items/1" });
    const span = await only("resources/read");
    expect(span.attributes).toMatchObject({
      ...OVER_HTTP,
      "mcp.method.name": "resources/read",
      "mcp.resource.uri": "test://items/1",
    });
  });

  it.each([
    ["tools/list", {}],
    ["prompts/list", {}],
    ["resources/list", {}],
    ["resources/templates/list", {}],
    ["server/discover", {}],
    [
      "completion/complete",
      { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "a" } },
    ],
  ])("should name %s after its method alone", async (method, params) => {
    const { error } = await call(send, method, params, { id: 3 });
    expect(error).toBeUndefined();
    const span = await only(method);
    expect(span.attributes).toEqual({
      ...OVER_HTTP,
      ...clientAddress,
      "mcp.method.name": method,
      "jsonrpc.request.id": "3",
    });
  });

  it("should end the subscriptions/listen span once the stream is open", async () => {
    const abort = new AbortController();
    const request = new Request(mounted.url, {
      method: "POST",
      headers: modernHeaders("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "listen-1",
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
      }),
      signal: abort.signal,
    });
    const response = transport === "fetch" ? await mcp.fetch(request) : await fetch(request);
    const reader = new SseReader(response.body!);
    expect((await reader.next())?.method).toBe("notifications/subscriptions/acknowledged");
    const span = await only("subscriptions/listen");
    expect(span.attributes).toMatchObject({
      ...OVER_HTTP,
      "mcp.method.name": "subscriptions/listen",
      "jsonrpc.request.id": "listen-1",
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    abort.abort();
    await reader.cancel();
  });

  it("should record an unknown tool's JSON-RPC error as error.type and rpc.response.status_code", async () => {
    const { error } = await call(send, "tools/call", { name: "nope", arguments: {} });
    const span = await only("tools/call nope");
    expect(span.attributes).toMatchObject({
      "error.type": String(error!.code),
      "rpc.response.status_code": String(error!.code),
      "gen_ai.tool.name": "nope",
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: error!.message });
  });

  it.each(["failing", "throws"])(
    "should record %s's result with isError as tool_error, with no status code",
    async (tool) => {
      const { result } = await call(send, "tools/call", { name: tool, arguments: {} });
      expect(result.isError).toBe(true);
      const span = await only(`tools/call ${tool}`);
      expect(span.attributes["error.type"]).toBe("tool_error");
      expect(span.attributes["rpc.response.status_code"]).toBeUndefined();
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
    },
  );

  it("should record a method handler that throws as an internal error", async () => {
    const { error } = await call(send, "fixture/broken", {});
    expect(error?.code).toBe(-32603);
    const span = await only("fixture/broken");
    expect(span.attributes).toMatchObject({
      "error.type": "-32603",
      "rpc.response.status_code": "-32603",
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "Internal error" });
  });

  it.each([
    ["a header that disagrees with the body", -32020, { headers: { "mcp-name": "other" } }, {}],
    ["a capability the tool needs and the client lacks", -32021, {}, {}],
    [
      "an unsupported protocol version",
      -32022,
      { headers: { "mcp-protocol-version": "2099-01-01" } },
      { "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
    ],
  ])("should record a request refused for %s with its code", async (_, code, options, meta) => {
    const params = { name: code === -32021 ? "confirm" : "echo", arguments: { text: "x" } };
    const { status, error } = await call(send, "tools/call", params, { ...options, meta });
    expect(status).toBe(400);
    expect(error?.code).toBe(code);
    const span = await only(`tools/call ${params.name}`);
    expect(span.attributes).toMatchObject({
      "error.type": String(code),
      "rpc.response.status_code": String(code),
      "mcp_mount.era": "modern",
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: error!.message });
  });

  it("should record an unknown method, answered 404, as -32601", async () => {
    const { status, error } = await call(send, "nothing/here", {}, { id: 9 });
    expect(error?.code).toBe(-32601);
    expect(status).toBe(404);
    const span = await only("nothing/here");
    expect(span.attributes).toMatchObject({
      "mcp.method.name": "nothing/here",
      "jsonrpc.request.id": "9",
      "error.type": "-32601",
      "rpc.response.status_code": "-32601",
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: error!.message });
  });
});
