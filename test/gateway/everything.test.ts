import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import {
  EVERYTHING_ELICITED,
  EVERYTHING_SAMPLED,
  EVERYTHING_TOOLS,
  everythingSettled,
  GATEWAY,
} from "../helpers/gateway-everything.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type Send, viaUrl } from "../helpers/modern.js";

// The official server-everything (stdio, pinned) behind one gateway process (`mcp-mount
// serve`), used by our own McpClient in both eras, and by raw requests whose every emitted
// message is validated against the era's schema (test/helpers/spec.ts). The official and
// third-party clients are in everything-clients.test.ts.

let gateway: GatewayProcess;
let send: Send;

beforeAll(async () => {
  gateway = await startGateway(GATEWAY);
  await everythingSettled(gateway);
  send = viaUrl(gateway.url);
});
afterAll(async () => {
  await gateway?.stop();
});

describe.each(["modern", "legacy"] as const)("our McpClient (%s) through the gateway", (era) => {
  const elicited: JsonObject[] = [];
  const sampled: JsonObject[] = [];
  let client: McpClient;

  beforeAll(async () => {
    client = await McpClient.connect(gateway.url, {
      era,
      onInput: {
        elicitation: (params) => {
          elicited.push(params);
          return { action: "accept", content: EVERYTHING_ELICITED };
        },
        sampling: (params) => {
          sampled.push(params);
          return EVERYTHING_SAMPLED;
        },
      },
    });
  });
  afterAll(async () => {
    await client?.close();
  });

  it("should speak its era and introduce the upstream", () => {
    expect(client.era).toBe(era);
    expect(client.server.serverInfo).toMatchObject({ name: "mcp-servers/everything" });
    expect(client.server.instructions).toContain("Everything Server");
  });

  it("should list server-everything's tools, the ones it offers clients that can answer input included", async () => {
    const names = (await client.tools()).map((tool) => tool.serverName);
    expect(names).toEqual(expect.arrayContaining(EVERYTHING_TOOLS));
  });

  it("should call tools and pass structured content through", async () => {
    expect((await client.callTool("echo", { message: "hi" })).content).toEqual([
      { type: "text", text: "Echo: hi" },
    ]);
    expect((await client.callTool("get-sum", { a: 2, b: 3 })).content).toEqual([
      { type: "text", text: "The sum of 2 and 3 is 5." },
    ]);
    const weather = await client.callTool("get-structured-content", { location: "Chicago" });
    expect(weather.structuredContent).toMatchObject({ temperature: expect.any(Number) });
  });

  it("should forward the upstream's progress to the caller", async () => {
    const progress: number[] = [];
    const result = await client.callTool(
      "trigger-long-running-operation",
      { duration: 0.3, steps: 3 },
      { onProgress: (event) => progress.push(event.progress) },
    );
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining("Steps: 3.") });
    expect(progress).toEqual([1, 2, 3]);
  });

  it("should get prompts and complete their arguments", async () => {
    const prompts = (await client.prompts()).map((prompt) => prompt.name);
    expect(prompts).toEqual([
      "simple-prompt",
      "args-prompt",
      "completable-prompt",
      "resource-prompt",
    ]);
    const prompt = await client.getPrompt("args-prompt", { city: "Lisbon" });
    expect(prompt.messages).toEqual([
      { role: "user", content: { type: "text", text: "What's weather in Lisbon?" } },
    ]);
    const departments = await client.complete(
      { type: "ref/prompt", name: "completable-prompt" },
      { name: "department", value: "S" },
    );
    expect(departments.values).toEqual(["Sales", "Support"]);
    const names = await client.complete(
      { type: "ref/prompt", name: "completable-prompt" },
      { name: "name", value: "" },
      { arguments: { department: "Engineering" } },
    );
    expect(names.values).toEqual(["Alice", "Bob", "Charlie"]);
  });

  it("should list and read resources and templates", async () => {
    const uris = (await client.resources()).map((resource) => resource.uri);
    expect(uris).toContain("demo://resource/static/document/architecture.md");
    const document = await client.readResource("demo://resource/static/document/features.md");
    expect(document.contents).toMatchObject([
      { mimeType: "text/markdown", text: expect.any(String) },
    ]);
    const templates = (await client.resourceTemplates()).map((template) => template.uriTemplate);
    expect(templates).toEqual([
      "demo://resource/dynamic/text/{resourceId}",
      "demo://resource/dynamic/blob/{resourceId}",
    ]);
    const dynamic = await client.readResource("demo://resource/dynamic/text/7", { fresh: true });
    expect(dynamic.contents).toMatchObject([{ text: expect.stringMatching(/^Resource 7: /) }]);
  });

  it("should bring the upstream's elicitation to the client and its answer back", async () => {
    const before = elicited.length;
    const result = await client.callTool("trigger-elicitation-request", {});
    expect(elicited.length).toBe(before + 1);
    expect(elicited.at(-1)).toMatchObject({ message: expect.stringContaining("Please provide") });
    expect(JSON.stringify(result.content)).toContain("- Name: Ada Lovelace");
  });

  it("should bring the upstream's sampling request to the client and its answer back", async () => {
    const before = sampled.length;
    const result = await client.callTool("trigger-sampling-request", { prompt: "a haiku" });
    expect(sampled.length).toBe(before + 1);
    expect(JSON.stringify(sampled.at(-1))).toContain("a haiku");
    expect(JSON.stringify(result.content)).toContain("from the test's model");
  });
});

describe("raw modern requests through the gateway, each message validated", () => {
  const ELICITATION = { capabilities: { elicitation: { form: {} } } };

  it("should answer lists, calls, prompts, reads and completions with valid results", async () => {
    for (const method of [
      "tools/list",
      "prompts/list",
      "resources/list",
      "resources/templates/list",
    ]) {
      const exchange = await call(send, method);
      expect(exchange.result.resultType, method).toBe("complete");
    }
    const echo = await call(send, "tools/call", { name: "echo", arguments: { message: "raw" } });
    expect(echo.result.content).toEqual([{ type: "text", text: "Echo: raw" }]);
    const prompt = await call(send, "prompts/get", { name: "simple-prompt" });
    expect(prompt.result.messages).toHaveLength(1);
    const read = await call(send, "resources/read", { uri: "demo://resource/dynamic/blob/2" });
    expect(read.result.contents).toMatchObject([{ blob: expect.any(String) }]);
    const completion = await call(send, "completion/complete", {
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "M" },
    });
    expect(completion.result.completion).toMatchObject({ values: ["Marketing"] });
  });

  it("should turn the upstream's elicitation into an input_required round and finish on the retry", async () => {
    const params = { name: "trigger-elicitation-request", arguments: {} };
    const first = await call(send, "tools/call", params, ELICITATION);
    expect(first.result.resultType).toBe("input_required");
    const requests = first.result.inputRequests as Record<string, { method: string }>;
    const [key, request] = Object.entries(requests)[0] ?? [];
    expect(request?.method).toBe("elicitation/create");
    const second = await call(
      send,
      "tools/call",
      {
        ...params,
        inputResponses: { [key!]: { action: "accept", content: EVERYTHING_ELICITED } },
        requestState: first.result.requestState,
      },
      ELICITATION,
    );
    expect(second.result.resultType).toBe("complete");
    expect(JSON.stringify(second.result.content)).toContain("- Name: Ada Lovelace");
  });
});

describe("raw legacy requests through the gateway, each message validated", () => {
  it("should serve a 2025-11-25 session's lists, calls, prompts, reads and completions", async () => {
    const session = await openSession(send, {});
    const tools = await legacyCall(send, session, "tools/list");
    const names = (tools.result.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toContain("get-sum");
    const sum = await legacyCall(send, session, "tools/call", {
      name: "get-sum",
      arguments: { a: 1, b: 41 },
    });
    expect(sum.result.content).toEqual([{ type: "text", text: "The sum of 1 and 41 is 42." }]);
    const prompt = await legacyCall(send, session, "prompts/get", {
      name: "args-prompt",
      arguments: { city: "Porto", state: "PT" },
    });
    expect(prompt.result.messages).toMatchObject([
      { content: { text: "What's weather in Porto, PT?" } },
    ]);
    const templates = await legacyCall(send, session, "resources/templates/list");
    expect(templates.result.resourceTemplates).toHaveLength(2);
    const read = await legacyCall(send, session, "resources/read", {
      uri: "demo://resource/dynamic/text/3",
    });
    expect(read.result.contents).toMatchObject([{ text: expect.stringMatching(/^Resource 3: /) }]);
    const completion = await legacyCall(send, session, "completion/complete", {
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "E" },
    });
    expect(completion.result.completion).toMatchObject({ values: ["Engineering"] });
    const ping = await legacyCall(send, session, "ping");
    expect(ping.result).toEqual({});
  });
});
