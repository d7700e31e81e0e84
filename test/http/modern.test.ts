import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer, type Probe } from "../helpers/fixture-server.js";
import { call, modernHeaders, modernMeta, type Send } from "../helpers/modern.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

const SERVER_INFO = { name: "fixture", version: "1.0.0" };

describe.each(TRANSPORTS)("modern era through %s", (transport) => {
  let mounted: Mounted;
  let send: Send;
  const probe: Probe = { aborted: [], started: [] };

  beforeAll(async () => {
    mounted = await mount(
      transport,
      createMcpHandler(createFixtureServer(probe), { secret: "test-secret" }),
    );
    send = mounted.send;
  });
  afterAll(() => mounted.close());

  describe("server/discover", () => {
    it("should list every supported version, capabilities, instructions and cache hints", async () => {
      const { status, result } = await call(send, "server/discover");
      expect(status).toBe(200);
      expect(result.supportedVersions).toEqual([
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
      ]);
      expect(result.capabilities).toMatchObject({
        tools: {},
        prompts: {},
        resources: {},
        completions: {},
      });
      expect(result.instructions).toBe("Fixture server for tests");
      expect(result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "public" });
      expect(result._meta).toEqual({ "io.modelcontextprotocol/serverInfo": SERVER_INFO });
    });
  });

  describe("tools", () => {
    it("should list tools in registration order with configured cache hints", async () => {
      const { result } = await call(send, "tools/list");
      const names = (result.tools as { name: string }[]).map((tool) => tool.name);
      expect(names.slice(0, 3)).toEqual(["echo", "json", "typed"]);
      expect(result).toMatchObject({ ttlMs: 60_000, cacheScope: "public" });
      const typed = (result.tools as Record<string, unknown>[]).find(
        (tool) => tool.name === "typed",
      );
      expect(typed?.outputSchema).toMatchObject({ required: ["double"] });
    });

    it("should answer a string return as one text block", async () => {
      const { result } = await call(send, "tools/call", {
        name: "echo",
        arguments: { text: "hi" },
      });
      expect(result.content).toEqual([{ type: "text", text: "hi" }]);
      expect(result.isError).toBeUndefined();
    });

    it("should answer a JSON value as structuredContent plus its text", async () => {
      const { result } = await call(send, "tools/call", { name: "json", arguments: {} });
      expect(result.structuredContent).toEqual({ answer: 42, list: [1, 2] });
      expect(result.content).toEqual([{ type: "text", text: '{"answer":42,"list":[1,2]}' }]);
    });

    it("should validate structured content against the output schema", async () => {
      const ok = await call(send, "tools/call", { name: "typed", arguments: { a: 4 } });
      expect(ok.result.structuredContent).toEqual({ double: 8 });
      const bad = await call(send, "tools/call", { name: "bad_output", arguments: {} });
      expect(bad.result.isError).toBe(true);
    });

    it("should report invalid arguments as an isError result with the reasons", async () => {
      const { status, result } = await call(send, "tools/call", {
        name: "echo",
        arguments: { text: 5 },
      });
      expect(status).toBe(200);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain("/text must be string");
    });

    it("should turn a handler exception into a safe isError result without a stack", async () => {
      const { result } = await call(send, "tools/call", { name: "throws", arguments: {} });
      expect(result.isError).toBe(true);
      const text = JSON.stringify(result.content);
      expect(text).toContain("database unavailable");
      expect(text).not.toMatch(/at .*\.ts:\d+/);
    });

    it("should answer an unknown tool with -32602", async () => {
      const { error } = await call(send, "tools/call", { name: "nope", arguments: {} });
      expect(error?.code).toBe(-32602);
    });

    it("should stream progress and log notifications over SSE, honouring the log level", async () => {
      const exchange = await call(
        send,
        "tools/call",
        { name: "steps", arguments: {} },
        { meta: { progressToken: "tok", "io.modelcontextprotocol/logLevel": "info" } },
      );
      expect(exchange.headers.get("content-type")).toBe("text/event-stream");
      expect(exchange.headers.get("x-accel-buffering")).toBe("no");
      const methods = exchange.messages.map((message) => message.method ?? "response");
      expect(methods).toEqual([
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
        "response",
      ]);
      expect(exchange.messages[1]?.params).toEqual({ level: "warning", data: "careful" });
      expect(exchange.result.content).toEqual([{ type: "text", text: "finished" }]);
    });

    it("should send no log messages when the request names no level", async () => {
      const exchange = await call(send, "tools/call", { name: "steps", arguments: {} });
      expect(exchange.messages.map((m) => m.method ?? "response")).toEqual(["response"]);
    });

    it("should reject an unknown log level with -32602", async () => {
      const { status, error } = await call(
        send,
        "tools/call",
        { name: "echo", arguments: { text: "x" } },
        { meta: { "io.modelcontextprotocol/logLevel": "loud" } },
      );
      expect(status).toBe(400);
      expect(error?.code).toBe(-32602);
    });
  });

  describe("multi round-trip requests", () => {
    const elicitation = { elicitation: {} };

    it("should ask for input, then complete on the retry with the answers", async () => {
      const first = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: { item: "a" } },
        { capabilities: elicitation },
      );
      expect(first.result.resultType).toBe("input_required");
      const requests = first.result.inputRequests as Record<
        string,
        { method: string; params: Record<string, unknown> }
      >;
      expect(Object.keys(requests)).toEqual(["confirm"]);
      expect(requests.confirm?.method).toBe("elicitation/create");
      expect(requests.confirm?.params.message).toBe("Delete a?");
      const second = await call(
        send,
        "tools/call",
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: { confirm: { action: "accept", content: { ok: true } } },
          requestState: first.result.requestState,
        },
        { capabilities: elicitation },
      );
      expect(second.result.structuredContent).toEqual({
        action: "accept",
        content: { ok: true },
        rounds: 2,
      });
    });

    it("should ask again, not fail, when the retry lacks the answer", async () => {
      const first = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {} },
        { capabilities: elicitation },
      );
      const again = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {}, requestState: first.result.requestState },
        { capabilities: elicitation },
      );
      expect(again.result.resultType).toBe("input_required");
      expect(Object.keys(again.result.inputRequests as object)).toEqual(["confirm"]);
    });

    it("should carry earlier answers through several rounds", async () => {
      const caps = { elicitation: {}, sampling: {} };
      const r1 = await call(
        send,
        "tools/call",
        { name: "two_steps", arguments: {} },
        { capabilities: caps },
      );
      expect(Object.keys(r1.result.inputRequests as object)).toEqual(["step1"]);
      const r2 = await call(
        send,
        "tools/call",
        {
          name: "two_steps",
          arguments: {},
          inputResponses: { step1: { action: "accept", content: { v: "x" } } },
          requestState: r1.result.requestState,
        },
        { capabilities: caps },
      );
      expect(Object.keys(r2.result.inputRequests as object)).toEqual(["step2"]);
      const r3 = await call(
        send,
        "tools/call",
        {
          name: "two_steps",
          arguments: {},
          inputResponses: {
            step2: { role: "assistant", content: { type: "text", text: "y" }, model: "m" },
          },
          requestState: r2.result.requestState,
        },
        { capabilities: caps },
      );
      expect(r3.result.structuredContent).toEqual({
        first: { v: "x" },
        second: { type: "text", text: "y" },
      });
    });

    it("should ask again when an answer has the wrong shape", async () => {
      const r = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {}, inputResponses: { confirm: 12345 } },
        { capabilities: elicitation },
      );
      expect(r.result.resultType).toBe("input_required");
      const wrongShape = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {}, inputResponses: { confirm: { nothing: true } } },
        { capabilities: elicitation },
      );
      expect(wrongShape.result.resultType).toBe("input_required");
    });

    it("should collect inputs asked for concurrently in one round", async () => {
      const r = await call(
        send,
        "tools/call",
        { name: "both_at_once", arguments: {} },
        { capabilities: { elicitation: {}, roots: {} } },
      );
      expect(Object.keys(r.result.inputRequests as object).sort()).toEqual([
        "client_roots",
        "name",
      ]);
    });

    it("should answer -32021 with HTTP 400 when the client lacks the capability", async () => {
      const { status, error } = await call(send, "tools/call", { name: "confirm", arguments: {} });
      expect(status).toBe(400);
      expect(error?.code).toBe(-32021);
      expect(error?.data).toEqual({ requiredCapabilities: { elicitation: {} } });
    });

    it("should reject tampered, foreign and mismatched request state with -32602", async () => {
      const first = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: { item: "a" } },
        { capabilities: elicitation },
      );
      const state = first.result.requestState as string;
      const flipped = `${state.slice(0, -2)}${state.at(-2) === "A" ? "B" : "A"}${state.slice(-1)}`;
      const retry = (params: Record<string, unknown>) =>
        call(send, "tools/call", params, { capabilities: elicitation });
      const answers = { confirm: { action: "accept", content: { ok: true } } };
      for (const params of [
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: answers,
          requestState: flipped,
        },
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: answers,
          requestState: "garbage",
        },
        // Same state, other params: the digest no longer matches.
        { name: "confirm", arguments: { item: "b" }, inputResponses: answers, requestState: state },
      ]) {
        const { error } = await retry(params);
        expect(error?.code).toBe(-32602);
      }
      const otherMethod = await call(send, "prompts/get", {
        name: "greet",
        arguments: { who: "x" },
        requestState: state,
      });
      expect(otherMethod.error?.code).toBe(-32602);
    });
  });

  describe("prompts", () => {
    it("should list and get prompts", async () => {
      const list = await call(send, "prompts/list");
      expect((list.result.prompts as { name: string }[]).map((p) => p.name)).toEqual([
        "greet",
        "many",
      ]);
      const got = await call(send, "prompts/get", {
        name: "greet",
        arguments: { who: "Ada", style: "warm" },
      });
      expect(got.result.messages).toEqual([
        { role: "user", content: { type: "text", text: "Say hello to Ada in a warm way" } },
      ]);
    });

    it("should reject a missing required argument and an unknown prompt with -32602", async () => {
      expect((await call(send, "prompts/get", { name: "greet", arguments: {} })).error?.code).toBe(
        -32602,
      );
      expect((await call(send, "prompts/get", { name: "nope" })).error?.code).toBe(-32602);
    });

    it("should complete prompt arguments, at most 100 values with hasMore", async () => {
      const r = await call(send, "completion/complete", {
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "al" },
      });
      expect(r.result.completion).toEqual({
        values: ["alice", "albert"],
        total: 2,
        hasMore: false,
      });
      const many = await call(send, "completion/complete", {
        ref: { type: "ref/prompt", name: "many" },
        argument: { name: "x", value: "" },
      });
      const completion = many.result.completion as {
        values: string[];
        hasMore: boolean;
        total: number;
      };
      expect(completion.values).toHaveLength(100);
      expect(completion).toMatchObject({ hasMore: true, total: 150 });
    });
  });

  describe("resources", () => {
    it("should list resources, including those a template lists", async () => {
      const { result } = await call(send, "resources/list");
      expect((result.resources as { uri: string }[]).map((r) => r.uri)).toEqual([
        "test://static",
        "test://binary",
        "test://items/1",
      ]);
    });

    it("should read text and binary resources with their cache hints", async () => {
      const text = await call(send, "resources/read", { uri: "test://static" });
      expect(text.result.contents).toEqual([
        { uri: "test://static", mimeType: "text/plain", text: "static text" },
      ]);
      expect(text.result).toMatchObject({ ttlMs: 5_000, cacheScope: "public" });
      const binary = await call(send, "resources/read", { uri: "test://binary" });
      expect(binary.result.contents).toEqual([
        { uri: "test://binary", mimeType: "application/octet-stream", blob: "AAEC/w==" },
      ]);
    });

    it("should read through a template and list templates", async () => {
      const item = await call(send, "resources/read", { uri: "test://items/42" });
      expect(item.result.contents).toEqual([
        { uri: "test://items/42", mimeType: "application/json", text: '{"id":"42"}' },
      ]);
      expect(item.result.cacheScope).toBe("private");
      const templates = await call(send, "resources/templates/list");
      expect(templates.result.resourceTemplates).toEqual([
        { uriTemplate: "test://items/{id}", name: "item", mimeType: "application/json" },
      ]);
    });

    it("should answer an unknown resource with -32602 in the modern era", async () => {
      const { error } = await call(send, "resources/read", { uri: "test://missing" });
      expect(error?.code).toBe(-32602);
    });

    it("should complete template variables", async () => {
      const r = await call(send, "completion/complete", {
        ref: { type: "ref/resource", uri: "test://items/{id}" },
        argument: { name: "id", value: "1" },
      });
      expect((r.result.completion as { values: string[] }).values).toEqual(["1", "10"]);
    });
  });

  describe("custom methods", () => {
    it("should dispatch a registered custom method", async () => {
      const { result } = await call(send, "fixture/echo", { value: 7 });
      expect(result.echoed).toBe(7);
    });
  });

  describe("headers mirrored from the body", () => {
    const body = (method: string, params: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: modernMeta() } });
    const raw = async (
      headers: Record<string, string>,
      method: string,
      params: Record<string, unknown>,
    ) => {
      const response = await send({ method: "POST", headers, body: body(method, params) });
      return { status: response.status, body: JSON.parse(response.text) };
    };
    const echo = { name: "echo", arguments: { text: "x" } };

    it("should answer -32020 when a required header is missing or differs", async () => {
      const base = modernHeaders("tools/call", "echo");
      const cases: Record<string, string | undefined>[] = [
        { "mcp-protocol-version": undefined },
        { "mcp-method": undefined },
        { "mcp-name": undefined },
        { "mcp-method": "tools/list" },
        { "mcp-name": "other" },
      ];
      for (const change of cases) {
        const headers: Record<string, string> = { ...base };
        for (const [key, value] of Object.entries(change)) {
          if (value === undefined) delete headers[key];
          else headers[key] = value;
        }
        const { status, body: reply } = await raw(headers, "tools/call", echo);
        expect(status, JSON.stringify(change)).toBe(400);
        expect(reply.error.code).toBe(-32020);
      }
    });

    it("should decode a base64 sentinel Mcp-Name before comparing", async () => {
      const headers = { ...modernHeaders("tools/call"), "mcp-name": `=?base64?${btoa("echo")}?=` };
      const { status, body: reply } = await raw(headers, "tools/call", echo);
      expect(status).toBe(200);
      expect(reply.result.content).toEqual([{ type: "text", text: "x" }]);
    });

    it("should check Mcp-Param headers against x-mcp-header arguments", async () => {
      const args = { region: "日本", count: 42, query: "q" };
      const headers = {
        ...modernHeaders("tools/call", "regional"),
        "mcp-param-region": `=?base64?${Buffer.from("日本").toString("base64")}?=`,
        "mcp-param-count": "42.0",
      };
      const ok = await raw(headers, "tools/call", { name: "regional", arguments: args });
      expect(ok.status).toBe(200);
      expect(ok.body.result.content[0].text).toBe("日本:42:q");
      const missing = await raw({ ...headers, "mcp-param-count": "" }, "tools/call", {
        name: "regional",
        arguments: args,
      });
      expect(missing.body.error.code).toBe(-32020);
      const { "mcp-param-region": _drop, ...withoutRegion } = headers;
      const absent = await raw(withoutRegion, "tools/call", { name: "regional", arguments: args });
      expect(absent.status).toBe(400);
      expect(absent.body.error.code).toBe(-32020);
      const wrong = await raw({ ...headers, "mcp-param-count": "41" }, "tools/call", {
        name: "regional",
        arguments: args,
      });
      expect(wrong.body.error.code).toBe(-32020);
      const omitted = await raw(modernHeaders("tools/call", "regional"), "tools/call", {
        name: "regional",
        arguments: { query: "q" },
      });
      expect(omitted.status).toBe(200);
    });

    it("should reject a malformed base64 sentinel and take an unwrapped value literally", async () => {
      const args = { region: "Hello", query: "q" };
      const send1 = (region: string) =>
        raw(
          { ...modernHeaders("tools/call", "regional"), "mcp-param-region": region },
          "tools/call",
          {
            name: "regional",
            arguments: args,
          },
        );
      expect((await send1("=?base64?SGVsbG8=?=")).status).toBe(200);
      for (const bad of ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="]) {
        const { status, body: reply } = await send1(bad);
        expect(status, bad).toBe(400);
        expect(reply.error.code).toBe(-32020);
      }
      const literal = await raw(
        { ...modernHeaders("tools/call", "regional"), "mcp-param-region": "=?base64?SGVsbG8=" },
        "tools/call",
        { name: "regional", arguments: { region: "=?base64?SGVsbG8=", query: "q" } },
      );
      expect(literal.status).toBe(200);
    });

    it("should answer a version header that disagrees with the body with -32020, before the version check", async () => {
      const response = await send({
        method: "POST",
        headers: modernHeaders("server/discover"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 302,
          method: "server/discover",
          params: {
            _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0" },
          },
        }),
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toMatchObject({ id: 302, error: { code: -32020 } });
    });

    it("should answer -32022 with the supported versions for an unknown version", async () => {
      const response = await send({
        method: "POST",
        headers: { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/list",
          params: {
            _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
          },
        }),
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toEqual({
        jsonrpc: "2.0",
        id: 9,
        error: {
          code: -32022,
          message: "Unsupported protocol version: 2099-01-01",
          data: { supported: ["2026-07-28"], requested: "2099-01-01" },
        },
      });
    });

    it("should answer -32602 with HTTP 400 when clientCapabilities is missing", async () => {
      const response = await send({
        method: "POST",
        headers: modernHeaders("tools/list"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
        }),
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).error.code).toBe(-32602);
    });
  });

  describe("bad input", () => {
    const good = () =>
      call(send, "tools/call", { name: "echo", arguments: { text: "still here" } });
    const post = (body: string, headers: Record<string, string> = modernHeaders("tools/list")) =>
      send({ method: "POST", headers, body });

    it.each(["GET", "DELETE"])(
      "should answer %s without a session with 400 on a dual-era endpoint",
      async (method) => {
        const response = await send({ method, headers: { accept: "text/event-stream" } });
        expect(response.status).toBe(400);
        expect(JSON.parse(response.text).error.code).toBe(-32600);
        expect((await good()).result.content).toEqual([{ type: "text", text: "still here" }]);
      },
    );

    it.each(["GET", "DELETE"])("should answer %s with 405 when legacy is off", async (method) => {
      const modernOnly = createMcpHandler(createFixtureServer(), { secret: "s", legacy: false });
      const response = await modernOnly.fetch(
        new Request("http://127.0.0.1/mcp", { method, headers: { accept: "text/event-stream" } }),
      );
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect((await response.json()).error.code).toBe(-32600);
      await modernOnly.close();
    });

    it("should answer each malformed request with its status and JSON-RPC code, and keep serving", async () => {
      const headers = modernHeaders("tools/list");
      const cases: [string, Promise<{ status: number; text: string }>, number, number][] = [
        ["malformed JSON", post("{not json"), 400, -32700],
        ["batch", post("[]"), 400, -32600],
        ["not an object", post("42"), 400, -32600],
        ["no method", post('{"jsonrpc":"2.0","id":1}'), 400, -32600],
        ["null id", post('{"jsonrpc":"2.0","id":null,"method":"tools/list"}'), 400, -32600],
        ["a response", post('{"jsonrpc":"2.0","id":1,"result":{}}'), 400, -32600],
        ["text/plain", post("{}", { ...headers, "content-type": "text/plain" }), 415, -32600],
        ["no SSE in Accept", post("{}", { ...headers, accept: "application/json" }), 406, -32600],
        ["foreign Origin", post("{}", { ...headers, origin: "http://evil.example" }), 403, -32600],
        [
          "no _meta",
          post('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}'),
          400,
          -32602,
        ],
        [
          "unknown method",
          call(send, "no/such").then((e) => ({
            status: e.status,
            text: JSON.stringify(e.response),
          })),
          404,
          -32601,
        ],
        [
          "ping does not exist in this era",
          call(send, "ping").then((e) => ({ status: e.status, text: JSON.stringify(e.response) })),
          404,
          -32601,
        ],
      ];
      for (const [label, pending, status, code] of cases) {
        const response = await pending;
        expect(response.status, label).toBe(status);
        expect(JSON.parse(response.text).error.code, label).toBe(code);
      }
      expect((await good()).status).toBe(200);
    });

    it("should answer 413 to a body over the limit", async () => {
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { pad: "x".repeat(5 * 1024 * 1024), _meta: modernMeta() },
      });
      const response = await post(big);
      expect(response.status).toBe(413);
      expect(JSON.parse(response.text).error.code).toBe(-32600);
      expect((await good()).status).toBe(200);
    });

    it("should accept a notification with 202 and no body", async () => {
      const response = await post(
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/whatever",
          params: { _meta: modernMeta() },
        }),
      );
      expect(response.status).toBe(202);
      expect(response.text).toBe("");
    });
  });
});
