import { createMCPClient, ElicitationRequestSchema } from "@ai-sdk/mcp";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EVERYTHING_ELICITED,
  EVERYTHING_SAMPLED,
  EVERYTHING_TOOLS,
  everythingSettled,
  GATEWAY,
} from "../helpers/gateway-everything.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";

// server-everything behind one gateway process (`mcp-mount serve`), used by the official SDK
// v1 client (legacy era only), the official SDK v2 client (both eras) and a third-party
// client, the AI SDK's @ai-sdk/mcp (both eras; it answers elicitation only, it has no sampling).

let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGateway(GATEWAY);
  await everythingSettled(gateway);
});
afterAll(async () => {
  await gateway?.stop();
});

/** What each client saw of the calls server-everything's tools made back. */
interface Seen {
  elicited: unknown[];
  sampled: unknown[];
}

/** The calls every client makes; `sdk` is the shape the v1 and v2 clients share. */
interface SdkLike {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{
    messages: unknown[];
  }>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
  complete(params: {
    ref: { type: "ref/prompt"; name: string };
    argument: { name: string; value: string };
  }): Promise<{ completion: { values: string[] } }>;
}

/** The same uses of server-everything through any client of the SDK's shape. */
async function useEverything(client: SdkLike, seen: Seen, sampling: boolean): Promise<void> {
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  expect(tools).toEqual(
    expect.arrayContaining(
      EVERYTHING_TOOLS.filter((name) => sampling || !name.includes("sampling")),
    ),
  );
  expect(await client.callTool({ name: "echo", arguments: { message: "hello" } })).toMatchObject({
    content: [{ type: "text", text: "Echo: hello" }],
  });
  const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  expect(prompts).toContain("args-prompt");
  const prompt = await client.getPrompt({ name: "args-prompt", arguments: { city: "Oslo" } });
  expect(prompt.messages).toMatchObject([{ content: { text: "What's weather in Oslo?" } }]);
  const resources = (await client.listResources()).resources.map((resource) => resource.uri);
  expect(resources).toContain("demo://resource/static/document/features.md");
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  expect(templates.map((template) => template.uriTemplate)).toContain(
    "demo://resource/dynamic/text/{resourceId}",
  );
  const read = await client.readResource({ uri: "demo://resource/dynamic/text/5" });
  expect(read.contents).toMatchObject([{ text: expect.stringMatching(/^Resource 5: /) }]);
  const completion = await client.complete({
    ref: { type: "ref/prompt", name: "completable-prompt" },
    argument: { name: "department", value: "Su" },
  });
  expect(completion.completion.values).toEqual(["Support"]);

  const elicitation = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
  expect(seen.elicited).toHaveLength(1);
  expect(JSON.stringify(elicitation)).toContain("- Name: Ada Lovelace");
  if (!sampling) return;
  const sample = await client.callTool({
    name: "trigger-sampling-request",
    arguments: { prompt: "a limerick" },
  });
  expect(seen.sampled).toHaveLength(1);
  expect(JSON.stringify(seen.sampled[0])).toContain("a limerick");
  expect(JSON.stringify(sample)).toContain("from the test's model");
}

describe("the official SDK v1 client (legacy era) through the gateway", () => {
  it("should use server-everything's tools, prompts, resources, elicitation and sampling", async () => {
    const seen: Seen = { elicited: [], sampled: [] };
    const client = new ClientV1(
      { name: "gateway-v1", version: "1.0.0" },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.elicited.push(request.params);
      return { action: "accept", content: EVERYTHING_ELICITED };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen.sampled.push(request.params);
      return EVERYTHING_SAMPLED as never;
    });
    const transport = new TransportV1(new URL(gateway.url));
    await client.connect(transport);
    expect(transport.sessionId).toBeTruthy();
    expect(client.getServerVersion()).toMatchObject({ name: "mcp-servers/everything" });
    await useEverything(client as unknown as SdkLike, seen, true);
    await transport.terminateSession();
    await client.close();
  });
});

describe.each(["modern", "legacy"] as const)(
  "the official SDK v2 client (%s) through the gateway",
  (era) => {
    it("should use server-everything's tools, prompts, resources, elicitation and sampling", async () => {
      const seen: Seen = { elicited: [], sampled: [] };
      const client = new ClientV2(
        { name: "gateway-v2", version: "1.0.0" },
        {
          ...(era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
          capabilities: { elicitation: { form: {} }, sampling: {} },
        },
      );
      client.setRequestHandler("elicitation/create", async (request) => {
        seen.elicited.push(request.params);
        return { action: "accept", content: EVERYTHING_ELICITED };
      });
      client.setRequestHandler("sampling/createMessage", async (request) => {
        seen.sampled.push(request.params);
        return EVERYTHING_SAMPLED as never;
      });
      await client.connect(new TransportV2(new URL(gateway.url)));
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getServerVersion()).toMatchObject({ name: "mcp-servers/everything" });
      await useEverything(client as unknown as SdkLike, seen, true);
      await client.close();
    });
  },
);

describe.each(["modern", "legacy"] as const)("@ai-sdk/mcp (%s) through the gateway", (era) => {
  it("should use server-everything's tools, prompts, resources and elicitation", async () => {
    const seen: Seen = { elicited: [], sampled: [] };
    const client = await createMCPClient({
      transport: { type: "http", url: gateway.url },
      protocolVersionDiscovery: era === "modern",
      capabilities: { elicitation: {} },
    });
    client.onElicitationRequest(ElicitationRequestSchema, (request) => {
      seen.elicited.push(request.params);
      return { action: "accept", content: EVERYTHING_ELICITED };
    });
    expect(client.serverInfo).toMatchObject({ name: "mcp-servers/everything" });
    const version = client.initializeResult.protocolVersion;
    if (era === "modern") expect(version).toBe("2026-07-28");
    else expect(version).not.toBe("2026-07-28");
    const tools = await client.tools();
    expect(Object.keys(tools)).toContain("get-sum");
    await useEverything(client as unknown as SdkLike, seen, false);
    await client.close();
  });
});
