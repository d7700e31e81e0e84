import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { call } from "../helpers/modern.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

const TEXT = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

/** A Standard Schema for `{ text }` whose validation answers at once, later, or throws. */
function standard(answer: "now" | "later" | "throws") {
  const validate = (value: unknown) => {
    if (answer === "throws") throw new Error("the validator broke");
    const { text } = (value ?? {}) as { text?: unknown };
    return typeof text === "string"
      ? { value: { text: text.toUpperCase() } }
      : { issues: [{ message: "text must be a string" }] };
  };
  return {
    "~standard": {
      version: 1 as const,
      vendor: "test",
      jsonSchema: { input: () => TEXT, output: () => TEXT },
      validate: answer === "later" ? async (value: unknown) => validate(value) : validate,
    },
  };
}

// A tool's handler and its input validator may answer at once or later: runToolNow waits only
// for what is a promise or another thenable, and takes the rest as the answer itself.
function answersServer(): McpServer {
  const server = new McpServer({ name: "answers", version: "1.0.0" });
  server.tool({ name: "now", input: TEXT }, ({ text }) => `now ${text}`);
  server.tool({ name: "later", input: TEXT }, async ({ text }) => `later ${text}`);
  server.tool({ name: "thenable", input: TEXT }, ({ text }) => ({
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
  for (const answer of ["now", "later", "throws"] as const) {
    server.tool(
      { name: `standard-${answer}`, input: standard(answer) },
      (args) => `standard ${(args as { text: string }).text}`,
    );
  }
  // Output checked against a JSON Schema (at once) and a Standard Schema (later).
  for (const [kind, output] of [
    ["json", TEXT],
    ["standard", standard("later")],
  ] as const) {
    server.tool({ name: `output-${kind}`, input: { type: "object" }, output }, (args) => ({
      content: [],
      structuredContent: (args as { give?: unknown }).give as Record<string, unknown>,
    }));
  }
  // The same result object every time, with and without an output schema: the era decorates a
  // copy, never the handler's own object.
  server.tool({ name: "shared" }, () => SHARED);
  server.tool({ name: "shared-output", output: TEXT }, () => SHARED_OUTPUT);
  return server;
}

const SHARED = { content: [{ type: "text" as const, text: "shared" }] };
const SHARED_OUTPUT = { content: [], structuredContent: { text: "shared" } };

describe.each(TRANSPORTS)("runTool through %s", (transport) => {
  let mounted: Mounted;
  const errors: unknown[] = [];
  beforeAll(async () => {
    const mcp = createMcpHandler(answersServer(), { onError: (error) => errors.push(error) });
    mounted = await mount(transport, mcp);
  });
  afterAll(() => mounted.close());
  const textOf = (result: Record<string, unknown>) =>
    (result.content as { text: string }[])[0]?.text;
  const callTool = (name: string, args: Record<string, unknown>) =>
    call(mounted.send, "tools/call", { name, arguments: args });

  it("should answer with a value returned at once, a promise's or another thenable's", async () => {
    for (const name of ["now", "later", "thenable"]) {
      const { result } = await callTool(name, { text: "x" });
      expect(textOf(result)).toBe(`${name} x`);
      expect(result.isError).toBeUndefined();
    }
  });

  it("should answer isError for a handler that throws at once or rejects", async () => {
    const thrown = await callTool("throws", {});
    expect(thrown.result.isError).toBe(true);
    expect(textOf(thrown.result)).toMatch(/at once/);
    const rejected = await callTool("rejects", {});
    expect(rejected.result.isError).toBe(true);
    expect(textOf(rejected.result)).toMatch(/later/);
  });

  it("should use a Standard Schema's value and issues, whether it answers at once or later", async () => {
    for (const answer of ["now", "later"]) {
      const ok = await callTool(`standard-${answer}`, { text: "x" });
      expect(textOf(ok.result)).toBe("standard X");
      const bad = await callTool(`standard-${answer}`, { text: 1 });
      expect(bad.result.isError).toBe(true);
      expect(textOf(bad.result)).toMatch(/text must be a string/);
    }
  });

  it("should answer -32603 for a validator that throws, and report the error", async () => {
    errors.length = 0;
    const broken = await callTool("standard-throws", { text: "x" });
    expect(broken.error?.code).toBe(-32603);
    expect(errors).toEqual([expect.objectContaining({ message: "the validator broke" })]);
  });

  it("should check structured content against the output schema, at once or later", async () => {
    for (const kind of ["json", "standard"]) {
      const ok = await callTool(`output-${kind}`, { give: { text: "x" } });
      expect(ok.result.isError).toBeUndefined();
      expect(ok.result.structuredContent).toEqual({ text: "x" });
      for (const give of [{ text: 1 }, undefined]) {
        const bad = await callTool(`output-${kind}`, { give });
        expect(bad.result.isError).toBe(true);
        expect(textOf(bad.result)).toMatch(/returned invalid structured content/);
      }
    }
  });

  it("should decorate a copy of a handler's own result object, and a result made from text", async () => {
    for (const name of ["shared", "shared-output", "shared", "now"]) {
      const { result } = await callTool(name, { text: "x" });
      expect(result.resultType).toBe("complete");
    }
    expect(Object.keys(SHARED)).toEqual(["content"]);
    expect(Object.keys(SHARED_OUTPUT)).toEqual(["content", "structuredContent"]);
  });

  it("should answer an unknown tool with a JSON-RPC error, not an isError result", async () => {
    const unknown = await callTool("missing", {});
    expect(unknown.error?.code).toBe(-32602);
  });
});
