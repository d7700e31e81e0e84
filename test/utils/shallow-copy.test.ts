import { describe, expect, it } from "vitest";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { shallowCopy } from "../../src/utils/shallow-copy.js";
import { call, viaFetch } from "../helpers/modern.js";

describe("shallowCopy", () => {
  it("should copy own enumerable properties into a new object, as a spread does", () => {
    const inner = { a: 1 };
    const source = Object.create({ inherited: true }) as Record<string, unknown>;
    source.content = inner;
    Object.defineProperty(source, "hidden", { value: 1, enumerable: false });
    const copy = shallowCopy(source);
    expect(copy).not.toBe(source);
    expect(copy).toEqual({ ...source });
    expect(copy.content).toBe(inner);
    expect("inherited" in copy).toBe(false);
    expect("hidden" in copy).toBe(false);
  });

  it("should keep a __proto__ key as data, not as the copy's prototype", () => {
    const source = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as Record<string, unknown>;
    const copy = shallowCopy(source);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(["__proto__", "x"]);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"x":1}');
  });
});

describe("results a handler shares between calls", () => {
  it("should answer every call and leave the shared object as it was", async () => {
    const toolResult = Object.freeze({ content: Object.freeze([{ type: "text", text: "same" }]) });
    const promptResult = Object.freeze({ messages: [] });
    const readResult = Object.freeze({ contents: [{ uri: "mem://x", text: "x" }] });
    const server = new McpServer({ name: "shared", version: "1.0.0" });
    server.tool({ name: "same" }, () => toolResult);
    server.prompt({ name: "same" }, () => promptResult);
    server.resource({ uri: "mem://x", name: "x" }, () => readResult);
    const send = viaFetch(createMcpHandler(server).fetch);
    for (let i = 0; i < 2; i++) {
      const tool = await call(send, "tools/call", { name: "same", arguments: {} });
      expect(tool.result).toMatchObject({ content: [{ type: "text", text: "same" }] });
      expect(tool.result.resultType).toBe("complete");
      const prompt = await call(send, "prompts/get", { name: "same" });
      expect(prompt.result).toMatchObject({ messages: [], resultType: "complete" });
      const read = await call(send, "resources/read", { uri: "mem://x" });
      expect(read.result).toMatchObject({ contents: [{ uri: "mem://x", text: "x" }] });
    }
    expect(Object.keys(toolResult)).toEqual(["content"]);
    expect(Object.keys(promptResult)).toEqual(["messages"]);
    expect(Object.keys(readResult)).toEqual(["contents"]);
  });
});
