import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";

describe("McpServer registration", () => {
  const server = () => new McpServer({ name: "s", version: "1" });

  it("should refuse custom methods that would shadow protocol methods", () => {
    const s = server();
    for (const name of [
      "tools/call",
      "initialize",
      "ping",
      "server/discover",
      "notifications/foo",
      "subscriptions/listen",
    ]) {
      expect(() => s.method(name, () => ({}))).toThrow(/reserved/);
    }
    expect(() => s.method("acme/report", () => ({}))).not.toThrow();
  });

  it("should refuse duplicate names and invalid tool names", () => {
    const s = server();
    s.tool({ name: "a" }, () => "a");
    expect(() => s.tool({ name: "a" }, () => "a")).toThrow(/Duplicate/);
    expect(() => s.tool({ name: "has space" }, () => "")).toThrow(/Invalid tool name/);
  });

  it("should refuse x-mcp-header annotations the spec forbids", () => {
    const s = server();
    const bad = [
      { type: "object", properties: { a: { type: "number", "x-mcp-header": "A" } } },
      { type: "object", properties: { a: { type: "string", "x-mcp-header": "Bad Name" } } },
      {
        type: "object",
        properties: {
          a: { type: "string", "x-mcp-header": "X" },
          b: { type: "string", "x-mcp-header": "x" },
        },
      },
    ];
    bad.forEach((input, i) => {
      expect(() => s.tool({ name: `t${i}`, input }, () => "")).toThrow(/x-mcp-header/);
    });
  });

  it("should derive completions from registered completers", () => {
    const s = server();
    expect(s.capabilities().completions).toBeUndefined();
    s.prompt({ name: "p", arguments: [{ name: "a", complete: () => [] }] }, () => "");
    expect(s.capabilities().completions).toEqual({});
  });

  it("should emit one change event per registration and removal", () => {
    const s = server();
    const events: string[] = [];
    s.onChange((event) => events.push(event.kind));
    const reg = s.prompt({ name: "p" }, () => "");
    reg.remove();
    reg.remove();
    s.resource({ uri: "a://b", name: "b" }, () => "");
    expect(events).toEqual(["prompts", "prompts", "resources"]);
  });
});
