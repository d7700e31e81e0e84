import { describe, expect, it } from "vitest";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { call, viaFetch } from "../helpers/modern.js";

// A tool's handler and its input validator may answer at once or later: runTool awaits only
// what is a promise or another thenable, and treats the rest as the answer itself.
describe("what a tool handler returns", () => {
  const server = new McpServer({ name: "answers", version: "1.0.0" });
  const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
  server.tool({ name: "now", input: text }, ({ text }) => `now ${text}`);
  server.tool({ name: "later", input: text }, async ({ text }) => `later ${text}`);
  server.tool({ name: "thenable", input: text }, ({ text }) => ({
    // biome-ignore lint/suspicious/noThenProperty: the point is a thenable that is not a Promise
    then(resolve: (value: string) => void) {
      setTimeout(() => resolve(`thenable ${text}`), 1);
    },
  }));
  server.tool({ name: "throws" }, () => {
    throw new Error("at once");
  });
  server.tool({ name: "rejects" }, async () => {
    throw new Error("later");
  });
  server.tool(
    {
      name: "standard",
      // A Standard Schema whose validation is asynchronous.
      input: {
        "~standard": {
          version: 1,
          vendor: "test",
          jsonSchema: { input: () => text, output: () => text },
          validate: async (value: unknown) => {
            const { text } = (value ?? {}) as { text?: unknown };
            return typeof text === "string"
              ? { value: { text: text.toUpperCase() } }
              : { issues: [{ message: "text must be a string" }] };
          },
        },
      },
    },
    (args) => `standard ${(args as { text: string }).text}`,
  );
  const send = viaFetch(createMcpHandler(server).fetch);
  const textOf = (result: Record<string, unknown>) =>
    (result.content as { text: string }[])[0]?.text;

  it("should answer with a value returned at once, a promise's or another thenable's", async () => {
    for (const name of ["now", "later", "thenable"]) {
      const { result } = await call(send, "tools/call", { name, arguments: { text: "x" } });
      expect(textOf(result)).toBe(`${name} x`);
      expect(result.isError).toBeUndefined();
    }
  });

  it("should answer isError for a handler that throws at once or rejects", async () => {
    const thrown = await call(send, "tools/call", { name: "throws", arguments: {} });
    expect(thrown.result.isError).toBe(true);
    expect(textOf(thrown.result)).toMatch(/at once/);
    const rejected = await call(send, "tools/call", { name: "rejects", arguments: {} });
    expect(rejected.result.isError).toBe(true);
    expect(textOf(rejected.result)).toMatch(/later/);
  });

  it("should wait for an asynchronous validator, and use its value", async () => {
    const ok = await call(send, "tools/call", { name: "standard", arguments: { text: "x" } });
    expect(textOf(ok.result)).toBe("standard X");
    const bad = await call(send, "tools/call", { name: "standard", arguments: { text: 1 } });
    expect(bad.result.isError).toBe(true);
    expect(textOf(bad.result)).toMatch(/text must be a string/);
  });

  it("should answer an unknown tool with a JSON-RPC error, not an isError result", async () => {
    const unknown = await call(send, "tools/call", { name: "missing", arguments: {} });
    expect(unknown.error?.code).toBe(-32602);
  });
});
