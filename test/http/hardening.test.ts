import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { serveStdio } from "../../src/adapters/stdio.js";
import { createMcpHandler, type McpHandler, memoryStore } from "../../src/index.js";
import { MAX_PARAMS_DEPTH } from "../../src/protocol/params.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import {
  LEGACY_VERSION,
  legacyCall,
  legacyHeaders,
  openSession,
  readLegacy,
} from "../helpers/legacy.js";
import { call, modernHeaders, modernMeta, readExchange, type Send } from "../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

/**
 * JSON text of `{"a":{"a":…1…}}` nested `levels` deep, built as text: JSON.stringify itself
 * overflows the stack on such values.
 */
function nested(levels: number, open = '{"a":', close = "}"): string {
  return `${open.repeat(levels)}1${close.repeat(levels)}`;
}

/** A modern tools/call whose body is written by hand, around a raw JSON `arguments` text. */
function modernToolCall(
  send: Send,
  tool: string,
  argumentsJson: string,
  capabilities: Record<string, unknown> = {},
) {
  const meta = JSON.stringify(modernMeta(capabilities));
  return send({
    method: "POST",
    headers: modernHeaders("tools/call", tool),
    body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${tool}","arguments":${argumentsJson},"_meta":${meta}}}`,
  });
}

/** A legacy tools/call in `session` (or none, when stateless), written by hand. */
function legacyToolCall(send: Send, session: string | undefined, argumentsJson: string) {
  return send({
    method: "POST",
    headers: legacyHeaders(session),
    body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":${argumentsJson}}}`,
  });
}

/** Arguments that put their innermost value at `depth` levels of the params (params is 1). */
function argumentsAtDepth(depth: number): string {
  // params (1) > arguments (2) > `depth - 2` more objects.
  return `{"text":"x","deep":${nested(depth - 2)}}`;
}

const TOO_DEEP = `nested more than ${MAX_PARAMS_DEPTH} levels deep`;

/** Well-formed legacy initialize params. */
const INITIALIZE_PARAMS = {
  protocolVersion: LEGACY_VERSION,
  capabilities: {},
  clientInfo: { name: "c", version: "1" },
};

describe.each(TRANSPORTS)("hardening through %s", (transport) => {
  let mounted: Mounted;
  let send: Send;
  let mcp: McpHandler;

  beforeAll(async () => {
    const server = createFixtureServer();
    // Hands the client's answer back as it came, so nothing else walks it first.
    server.tool({ name: "echo_answer" }, async (_args, ctx) => {
      const answer = await ctx.elicit("k", {
        mode: "form",
        message: "Anything?",
        requestedSchema: { type: "object", properties: {} },
      });
      return { content: [{ type: "text", text: "answered" }], structuredContent: answer };
    });
    mcp = createMcpHandler(server, { secret: "s", onError: () => {} });
    mounted = await mount(transport, mcp);
    send = mounted.send;
  });
  afterAll(() => mounted.close());

  describe("deeply nested params", () => {
    it.each([5_000, 100_000])(
      "should refuse %i levels with 400 and -32602, for a multi round-trip tool, a plain tool and a legacy call",
      async (levels) => {
        const session = await openSession(send, { elicitation: {} });
        const refusals = [
          readExchange(
            await modernToolCall(send, "confirm", `{"item":${nested(levels)}}`, {
              elicitation: {},
            }),
            "tools/call",
          ),
          readExchange(
            await modernToolCall(send, "echo", `{"text":"x","deep":${nested(levels)}}`),
            "tools/call",
          ),
          readExchange(
            await modernToolCall(send, "json", `{"list":${nested(levels, "[", "]")}}`),
            "tools/call",
          ),
          readLegacy(
            await legacyToolCall(send, session, `{"text":"x","deep":${nested(levels)}}`),
            "tools/call",
          ),
        ];
        for (const refusal of refusals) {
          expect(refusal.status).toBe(400);
          expect(refusal.error).toMatchObject({
            code: -32602,
            message: expect.stringContaining(TOO_DEEP),
          });
        }
        const after = await call(send, "tools/call", { name: "echo", arguments: { text: "fine" } });
        expect(after.result.content).toEqual([{ type: "text", text: "fine" }]);
        const legacyAfter = await legacyCall(send, session, "tools/call", {
          name: "echo",
          arguments: { text: "fine" },
        });
        expect(legacyAfter.result.content).toEqual([{ type: "text", text: "fine" }]);
      },
    );

    it("should refuse params nested deeply in _meta too", async () => {
      const meta = JSON.stringify(modernMeta()).replace(/}$/, `,"deep":${nested(5_000)}}`);
      const response = await send({
        method: "POST",
        headers: modernHeaders("tools/list"),
        body: `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":${meta}}}`,
      });
      expect(response.status).toBe(400);
      expect(readExchange(response, "tools/list").error?.code).toBe(-32602);
    });

    it(`should accept ${MAX_PARAMS_DEPTH} levels, and refuse one more`, async () => {
      const deepest = await modernToolCall(send, "echo", argumentsAtDepth(MAX_PARAMS_DEPTH));
      expect(readExchange(deepest, "tools/call").result.content).toEqual([
        { type: "text", text: "x" },
      ]);
      // The multi round-trip tool digests its params for requestState at the deepest level too.
      const asking = await modernToolCall(send, "confirm", argumentsAtDepth(MAX_PARAMS_DEPTH), {
        elicitation: {},
      });
      expect(readExchange(asking, "tools/call").result.resultType).toBe("input_required");
      const over = await modernToolCall(send, "echo", argumentsAtDepth(MAX_PARAMS_DEPTH + 1));
      expect(over.status).toBe(400);
      expect(readExchange(over, "tools/call").error?.message).toContain(TOO_DEEP);
    });
  });

  describe("a legacy client's deeply nested answer", () => {
    it("should fail the tool that asked, and keep the process up", async () => {
      const session = await openSession(send, { elicitation: {} });
      const init: RequestInit = {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          params: { name: "echo_answer", arguments: {} },
        }),
      };
      const response =
        transport === "fetch"
          ? await mcp.fetch(new Request(mounted.url, init))
          : await fetch(mounted.url, init);
      const reader = new SseReader(response.body!);
      const request = await reader.next();
      expect(request).toMatchObject({ method: "elicitation/create" });
      const answer = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: `{"jsonrpc":"2.0","id":${JSON.stringify(request?.id)},"result":{"action":"accept","content":${nested(5_000)}}}`,
      });
      expect(answer.status).toBe(202);
      const final = await reader.next();
      assertLegacyMessage(final, "tools/call");
      expect(final).toMatchObject({ id: 9, result: { isError: true } });
      expect(JSON.stringify(final)).toContain(
        `answer to elicitation/create is nested more than ${MAX_PARAMS_DEPTH} levels deep`,
      );
    });
  });

  describe("legacy initialize params", () => {
    const valid = INITIALIZE_PARAMS;
    const initialize = (params: unknown) =>
      send({
        method: "POST",
        headers: legacyHeaders(),
        body: JSON.stringify(
          params === undefined
            ? { jsonrpc: "2.0", id: 1, method: "initialize" }
            : { jsonrpc: "2.0", id: 1, method: "initialize", params },
        ),
      });

    it.each([
      ["no params", undefined, "protocolVersion"],
      ["no protocolVersion", { ...valid, protocolVersion: undefined }, "protocolVersion"],
      ["an empty protocolVersion", { ...valid, protocolVersion: "" }, "protocolVersion"],
      ["a numeric protocolVersion", { ...valid, protocolVersion: 20251125 }, "protocolVersion"],
      ["no capabilities", { ...valid, capabilities: undefined }, "capabilities"],
      ["capabilities that are not an object", { ...valid, capabilities: [] }, "capabilities"],
      ["no clientInfo", { ...valid, clientInfo: undefined }, "clientInfo"],
      ["clientInfo without a version", { ...valid, clientInfo: { name: "c" } }, "version"],
      [
        "a clientInfo name that is not a string",
        { ...valid, clientInfo: { name: 1, version: "1" } },
        "name",
      ],
    ])(
      "should refuse %s with 400 and -32602, and open no session",
      async (_case, params, named) => {
        const response = await initialize(params);
        expect(response.status).toBe(400);
        expect(response.headers.get("mcp-session-id")).toBeNull();
        const exchange = readLegacy(response, "initialize");
        expect(exchange.error?.code).toBe(-32602);
        expect(exchange.error?.message).toContain(named);
      },
    );

    it("should still answer a string version it does not serve with its latest", async () => {
      const response = await initialize({ ...valid, protocolVersion: "2099-01-01" });
      expect(response.status).toBe(200);
      expect(readLegacy(response, "initialize").result.protocolVersion).toBe(LEGACY_VERSION);
      expect(response.headers.get("mcp-session-id")).toBeTruthy();
    });
  });

  describe("stateless legacy mode", () => {
    let stateless: Mounted;

    beforeAll(async () => {
      const server = createFixtureServer();
      server.tool({ name: "sample_only" }, async (_args, ctx) => {
        const answer = await ctx.sample("s", {
          messages: [{ role: "user", content: { type: "text", text: "?" } }],
          maxTokens: 5,
        });
        return String(answer.role);
      });
      server.tool({ name: "roots_only" }, async (_args, ctx) => String((await ctx.roots()).roots));
      stateless = await mount(
        transport,
        createMcpHandler(server, { secret: "s", legacy: { stateless: true } }),
      );
    });
    afterAll(() => stateless.close());

    it.each([
      ["confirm", "elicitation"],
      ["sample_only", "sampling"],
      ["roots_only", "roots"],
    ])(
      "should tell %s that %s needs a session, not that the client lacks it",
      async (tool, capability) => {
        const capabilities = { elicitation: {}, sampling: {}, roots: {} };
        const init = await stateless.send({
          method: "POST",
          headers: legacyHeaders(),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { ...INITIALIZE_PARAMS, capabilities },
          }),
        });
        expect(init.status).toBe(200);
        const exchange = await legacyCall(stateless.send, undefined, "tools/call", {
          name: tool,
          arguments: { item: "x" },
        });
        expect(exchange.result.isError).toBe(true);
        const text = JSON.stringify(exchange.result.content);
        expect(text).toContain(`${capability} needs a legacy session`);
        expect(text).toContain("legacy.stateless");
        expect(text).not.toContain("does not support");
      },
    );

    it("should refuse deeply nested params without a session too", async () => {
      const response = await legacyToolCall(stateless.send, undefined, `{"d":${nested(5_000)}}`);
      expect(response.status).toBe(400);
      expect(readLegacy(response, "tools/call").error?.code).toBe(-32602);
    });
  });
});

describe("legacy initialize and the session store", () => {
  it("should create no session for params it refuses", async () => {
    const store = memoryStore();
    const create = vi.spyOn(store.sessions, "create");
    const mounted = await mount("fetch", createMcpHandler(createFixtureServer(), { store }));
    const response = await mounted.send({
      method: "POST",
      headers: legacyHeaders(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { capabilities: {} },
      }),
    });
    expect(response.status).toBe(400);
    expect(create).not.toHaveBeenCalled();
    await openSession(mounted.send);
    expect(create).toHaveBeenCalledTimes(1);
    await mounted.close();
  });
});

/** An in-process stdio server on pipes, and the messages it has written so far. */
function stdioPipes() {
  const input = new PassThrough();
  const output = new PassThrough();
  const running = serveStdio(createFixtureServer(), {
    input,
    output,
    secret: "s",
    onError: () => {},
  });
  let text = "";
  output.on("data", (chunk: Buffer) => (text += chunk.toString()));
  // Complete lines only: a chunk may end midway through one.
  const lines = () =>
    text
      .slice(0, text.lastIndexOf("\n") + 1)
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { input, running, lines };
}

describe("deeply nested input over stdio", () => {
  it("should answer params with -32602 and keep serving", async () => {
    const { input, running, lines } = stdioPipes();
    const meta = JSON.stringify(modernMeta());
    input.write(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{"item":${nested(100_000)}},"_meta":${meta}}}\n`,
    );
    input.write(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"},"_meta":${meta}}}\n`,
    );
    await expect.poll(() => lines().length).toBe(2);
    const [refused, served] = lines();
    assertModernMessage(refused, "tools/call");
    expect(refused).toMatchObject({
      id: 1,
      error: { code: -32602, message: expect.stringContaining(TOO_DEEP) },
    });
    assertModernMessage(served, "tools/call");
    expect(served).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "ok" }] } });
    await running.close();
  });

  it("should fail the tool whose elicitation the client answered too deeply", async () => {
    const { input, running, lines } = stdioPipes();
    const line = (message: unknown) => input.write(`${JSON.stringify(message)}\n`);
    line({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { ...INITIALIZE_PARAMS, capabilities: { elicitation: {} } },
    });
    line({ jsonrpc: "2.0", method: "notifications/initialized" });
    line({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "confirm", arguments: { item: "x" } },
    });
    await expect.poll(() => lines().find((m) => m.method === "elicitation/create")).toBeTruthy();
    const request = lines().find((m) => m.method === "elicitation/create")!;
    input.write(
      `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{"action":"accept","content":${nested(5_000)}}}\n`,
    );
    await expect.poll(() => lines().find((m) => m.id === 2)).toBeTruthy();
    const result = lines().find((m) => m.id === 2)!;
    assertLegacyMessage(result, "tools/call");
    expect(result).toMatchObject({ result: { isError: true } });
    expect(JSON.stringify(result)).toContain("answer to elicitation/create is nested more than");
    await running.close();
  });
});
