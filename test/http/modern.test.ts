import { describe, expect, it } from "vitest";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import { call, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

const SERVER_INFO = { name: "fixture", version: "1.0.0" };

// The modern era (2026-07-28) through each transport: discovery and tools.
describe.each(TRANSPORTS)("modern era through %s", (transport) => {
  const send: Send = suiteFixtureEndpoint(transport, { secret: "test-secret" }).send;

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
});
