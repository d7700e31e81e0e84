import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  InputRequiredError,
  McpClient,
  type McpClientOptions,
  McpError,
  ToolApprovalDeniedError,
} from "../../src/client/index.js";
import { nodeFetch } from "../../src/client/node.js";
import type { Probe } from "../helpers/fixture-server.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { callAndAbortOnProgress, type OurServer, startOurServer } from "./servers.js";

const answers: McpClientOptions["onInput"] = {
  elicitation: (params) => ({ action: "accept", content: { ok: true, asked: params.message } }),
  sampling: () => ({ role: "assistant", content: { type: "text", text: "sampled" }, model: "m" }),
  roots: () => [{ uri: "file:///work", name: "work" }],
};

// The last row: the same server on node:http, the client sending through nodeFetch.
describe.each([
  ["fetch", undefined],
  ["node", undefined],
  ["node", nodeFetch()],
] as const)("McpClient, modern era, through %s (client fetch: %s)", (transport, clientFetch) => {
  let ours: OurServer;
  const probe: Probe = { aborted: [], started: [] };
  const seen: string[] = [];

  beforeAll(async () => {
    ours = await startOurServer(transport, { server: createFixtureServer(probe), seen });
  });
  afterAll(() => ours.close());

  const connect = (options: McpClientOptions = {}) =>
    McpClient.connect(ours.url, {
      ...ours.reach,
      ...(clientFetch && { fetch: clientFetch }),
      onInput: answers,
      ...options,
    });

  it("should detect the modern era with server/discover and read the server's description", async () => {
    const client = await connect();
    expect(client.era).toBe("modern");
    expect(client.protocolVersion).toBe("2026-07-28");
    expect(client.server.serverInfo).toEqual({ name: "fixture", version: "1.0.0" });
    expect(client.server.instructions).toBe("Fixture server for tests");
    expect(client.server.supportedVersions).toContain("2025-11-25");
    expect(client.server.capabilities.tools).toEqual({ listChanged: true });
    expect((await client.discover()).serverInfo?.name).toBe("fixture");
    await client.close();
  });

  it("should list tools with predicates read from annotations with the spec's defaults", async () => {
    const client = await connect({ prefix: "fx_", requireApproval: ["confirm"] });
    const tools = await client.tools();
    const echo = tools.find((tool) => tool.serverName === "echo")!;
    expect(echo.name).toBe("fx_echo");
    expect(echo).toMatchObject({
      readOnly: true,
      destructive: false,
      idempotent: false,
      openWorld: true,
    });
    const json = tools.find((tool) => tool.serverName === "json")!;
    expect(json).toMatchObject({ readOnly: false, destructive: true, requiresApproval: false });
    expect(tools.find((tool) => tool.serverName === "confirm")!.requiresApproval).toBe(true);
    expect((await client.tool("fx_typed"))?.outputSchema).toBeDefined();
    // The listing is cached (ttlMs), and so are its Tool objects.
    expect((await client.tools())[0]).toBe(tools[0]);
    await client.close();
  });

  it("should return content, structured results and { error } for failed tools", async () => {
    const client = await connect();
    const echo = (await client.tool("echo"))!;
    expect(await echo.call({ text: "hi" })).toEqual([{ type: "text", text: "hi" }]);
    expect(await (await client.tool("throws"))!.call()).toEqual({
      error: expect.stringContaining("database unavailable"),
    });
    const typed = await client.callTool("typed", { a: 4 });
    expect(typed.structuredContent).toEqual({ double: 8 });
    const wrapped = await connect({ wrap: (result) => result.structuredContent });
    expect(await (await wrapped.tool("typed"))!.call({ a: 2 })).toEqual({ double: 4 });
    await wrapped.close();
    await client.close();
  });

  it("should refuse arguments that break the input schema without sending them", async () => {
    const client = await connect();
    const echo = (await client.tool("echo"))!;
    const before = seen.filter((method) => method === "tools/call").length;
    const result = await echo.call({ text: 42 });
    expect(result).toEqual({ error: expect.stringContaining("Invalid arguments for tool echo") });
    expect(seen.filter((method) => method === "tools/call").length).toBe(before);
    await client.close();
  });

  it("should mirror x-mcp-header parameters into Mcp-Param headers, base64 when not plain ASCII", async () => {
    const client = await connect();
    const regional = (await client.tool("regional"))!;
    expect(await regional.call({ region: "Zürich", count: 3, query: "q" })).toEqual([
      { type: "text", text: "Zürich:3:q" },
    ]);
    expect(await regional.call({ region: " padded ", query: "q" })).toEqual([
      { type: "text", text: " padded :undefined:q" },
    ]);
    // callTool by name mirrors them too, once tools() listed the tool.
    expect((await client.callTool("regional", { region: "eu", query: "q" })).content).toEqual([
      { type: "text", text: "eu:undefined:q" },
    ]);
    // Without the headers the server refuses the call: the mirroring is what made it pass.
    await expect(
      client.callTool("regional", { region: "eu", query: "q" }, { headers: {} }),
    ).rejects.toMatchObject({ code: -32020 });
    await client.close();
  });

  it("should ask onApproval before a tool that requires approval, and throw when denied", async () => {
    const asked: string[] = [];
    const client = await connect({
      requireApproval: (tool) => tool.destructive,
      onApproval: (tool, args) => {
        asked.push(tool.name);
        return args.text !== "no";
      },
    });
    const json = (await client.tool("json"))!;
    expect(json.requiresApproval).toBe(true);
    expect(await json.call({ text: "yes" })).toEqual([
      { type: "text", text: JSON.stringify({ answer: 42, list: [1, 2] }) },
    ]);
    await expect(json.call({ text: "no" })).rejects.toBeInstanceOf(ToolApprovalDeniedError);
    expect(asked).toEqual(["json", "json"]);
    expect((await client.tool("echo"))!.requiresApproval).toBe(false);
    await client.close();
    const noCallback = await connect({ requireApproval: ["json"] });
    await expect((await noCallback.tool("json"))!.call()).rejects.toBeInstanceOf(
      ToolApprovalDeniedError,
    );
    await noCallback.close();
  });

  it("should answer an elicitation through input_required and retry with the request state", async () => {
    const client = await connect();
    const result = await client.callTool("confirm", { item: "file.txt" });
    expect(result.structuredContent).toEqual({
      action: "accept",
      content: { ok: true, asked: "Delete file.txt?" },
      rounds: 2,
    });
    await client.close();
  });

  it("should go through several rounds: elicitation, then sampling, then roots and elicitation at once", async () => {
    const keys: string[] = [];
    const client = await connect({
      onInput: {
        ...answers,
        elicitation: (_params, context) => {
          keys.push(`${context.method}:${context.name}:${context.key}`);
          return { action: "accept", content: { v: "first" } };
        },
      },
    });
    const two = await client.callTool("two_steps");
    expect(two.structuredContent).toEqual({
      first: { v: "first" },
      second: { type: "text", text: "sampled" },
    });
    const both = await client.callTool("both_at_once");
    expect(both.structuredContent).toEqual({
      name: "accept",
      roots: [{ uri: "file:///work", name: "work" }],
    });
    expect(keys).toEqual(["tools/call:two_steps:step1", "tools/call:both_at_once:name"]);
    await client.close();
  });

  it("should throw InputRequiredError with the requests when no callback answers or rounds run out", async () => {
    const client = await connect({ onInput: {}, capabilities: { elicitation: { form: {} } } });
    const error = await client.callTool("confirm", { item: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputRequiredError);
    expect((error as InputRequiredError).inputRequests.confirm?.method).toBe("elicitation/create");
    expect((error as InputRequiredError).requestState).toEqual(expect.any(String));
    await client.close();
    const bounded = await connect({ maxInputRounds: 1 });
    await expect(bounded.callTool("two_steps")).rejects.toThrow(/after 1 rounds/);
    await bounded.close();
  });

  it("should declare only the capabilities its callbacks give", async () => {
    const client = await connect({ onInput: { sampling: answers!.sampling! } });
    // The server needs elicitation for this tool and the client did not declare it.
    await expect(client.callTool("confirm", { item: "x" })).rejects.toBeInstanceOf(McpError);
    await client.close();
  });

  it("should report progress and the log messages at the level asked for", async () => {
    const logs: unknown[] = [];
    const client = await connect({ logLevel: "warning", onLog: (message) => logs.push(message) });
    const progress: unknown[] = [];
    const result = await client.callTool("steps", {}, { onProgress: (p) => progress.push(p) });
    expect(result.content).toEqual([{ type: "text", text: "finished" }]);
    expect(progress).toEqual([
      { progress: 1, total: 2, message: "half" },
      { progress: 2, total: 2, message: "done" },
    ]);
    expect(logs).toEqual([expect.objectContaining({ level: "warning", data: "careful" })]);
    await client.setLogLevel("debug");
    await client.callTool("steps");
    expect(logs.slice(1)).toEqual([
      expect.objectContaining({ level: "debug" }),
      expect.objectContaining({ level: "warning" }),
    ]);
    await client.rootsChanged(); // nothing to send in this era
    await client.close();
  });

  it("should cancel by closing the stream when the signal aborts, and time out a round", async () => {
    const client = await connect();
    await expect(callAndAbortOnProgress(client, "slow", "user gave up")).rejects.toThrow(
      "user gave up",
    );
    await expect.poll(() => probe.aborted.filter((name) => name === "slow").length).toBe(1);
    await expect(client.callTool("slow", {}, { timeoutMs: 100 })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    await expect.poll(() => probe.aborted.length, { timeout: 3_000 }).toBe(2);
    await client.close();
  });

  it("should list and get prompts, and complete their arguments", async () => {
    const client = await connect();
    const prompts = await client.prompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["greet", "many"]);
    const greet = await client.getPrompt("greet", { who: "ada", style: "formal" });
    expect(greet.messages).toEqual([
      { role: "user", content: { type: "text", text: "Say hello to ada in a formal way" } },
    ]);
    expect(
      await client.complete({ type: "ref/prompt", name: "greet" }, { name: "who", value: "al" }),
    ).toMatchObject({
      values: ["alice", "albert"],
    });
    const many = await client.complete(
      { type: "ref/prompt", name: "many" },
      { name: "x", value: "" },
    );
    expect(many.values).toHaveLength(100);
    expect(many.hasMore).toBe(true);
    await client.close();
  });

  it("should list resources and templates and read text, binary and templated resources", async () => {
    const client = await connect();
    expect((await client.resources()).map((r) => r.uri)).toEqual(
      expect.arrayContaining(["test://static", "test://binary", "test://items/1"]),
    );
    expect((await client.resourceTemplates()).map((t) => t.uriTemplate)).toEqual([
      "test://items/{id}",
    ]);
    expect((await client.readResource("test://static")).contents).toEqual([
      { uri: "test://static", mimeType: "text/plain", text: "static text" },
    ]);
    expect((await client.readResource("test://binary")).contents).toEqual([
      expect.objectContaining({ blob: "AAEC/w==" }),
    ]);
    expect((await client.readResource("test://items/7")).contents).toEqual([
      { uri: "test://items/7", mimeType: "application/json", text: '{"id":"7"}' },
    ]);
    await expect(client.readResource("test://missing")).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });
});

describe("McpClient, a tool whose x-mcp-header changed after it was listed", () => {
  it("should list the tools again and retry once on HeaderMismatch", async () => {
    const ours = await startOurServer("fetch");
    const first = ours.server.tool(
      { name: "moving", input: { type: "object", properties: { zone: { type: "string" } } } },
      ({ zone }) => `zone ${String(zone)}`,
    );
    const client = await McpClient.connect(ours.url, { ...ours.reach });
    const moving = (await client.tool("moving"))!;
    first.remove();
    ours.server.tool(
      {
        name: "moving",
        input: { type: "object", properties: { zone: { type: "string", "x-mcp-header": "Zone" } } },
      },
      ({ zone }) => `zoned ${String(zone)}`,
    );
    expect(await moving.call({ zone: "b" })).toEqual([{ type: "text", text: "zoned b" }]);
    await client.close();
    await ours.close();
  });
});

describe("McpClient, a remembered era that no longer holds", () => {
  it("should forget it and detect the era again", async () => {
    const ours = await startOurServer("fetch", { legacy: false });
    const eraCache = new Map<string, "modern" | "legacy">([["http://127.0.0.1/mcp", "legacy"]]);
    const client = await McpClient.connect(ours.url, { fetch: ours.reach.fetch, eraCache });
    expect(client.era).toBe("modern");
    expect(eraCache.get("http://127.0.0.1/mcp")).toBe("modern");
    await client.close();
    await ours.close();
  });
});

describe("McpClient timeouts count silence", () => {
  it("should let a tool that keeps reporting progress run past timeoutMs", async () => {
    const server = createFixtureServer();
    server.tool({ name: "ticking" }, async (_args, ctx) => {
      for (let i = 1; i <= 10; i++) {
        // Work between two reports, each well under the client's timeout.
        await new Promise((resolve) => setTimeout(resolve, 60));
        await ctx.progress(i, 10);
      }
      return "done ticking";
    });
    const ours = await startOurServer("node", { server });
    // 600 ms of work, never more than 60 ms without progress, against a 300 ms timeout.
    const client = await McpClient.connect(ours.url, { ...ours.reach, timeoutMs: 300 });
    const result = await client.callTool("ticking", {}, { onProgress: () => {} });
    expect(result.content).toEqual([{ type: "text", text: "done ticking" }]);
    // Without a progress token the server stays silent, and the count runs out.
    await expect(client.callTool("ticking")).rejects.toMatchObject({ name: "TimeoutError" });
    await client.close();
    await ours.close();
  });
});

describe("McpClient.request, for methods without a helper", () => {
  it("should send any request with the era's _meta and headers", async () => {
    const ours = await startOurServer("fetch");
    const client = await McpClient.connect(ours.url, { ...ours.reach });
    expect(await client.request("fixture/echo", { value: 7 })).toMatchObject({ echoed: 7 });
    await expect(client.request("no/such/method")).rejects.toMatchObject({ code: -32601 });
    await client.close();
    await ours.close();
  });
});
