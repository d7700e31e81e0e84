import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  McpServer,
  Server,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  McpClient,
  type McpClientOptions,
  type Notification,
  toAnthropicTool,
} from "../../src/client/index.js";

const URL_ = "http://127.0.0.1/mcp";

function build(): McpServer {
  const server = new McpServer(
    { name: "sdk-v2", version: "2.0.0" },
    { instructions: "An SDK v2 server" },
  );
  server.registerTool(
    "echo",
    { inputSchema: z.object({ text: z.string() }), annotations: { readOnlyHint: true } },
    ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "deploy",
    {
      inputSchema: z.object({ env: z.string() }),
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async ({ env }, ctx) => {
      const confirmed = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
      const sampled = ctx.mcpReq.inputResponses?.summary;
      if (confirmed?.confirm !== true || !sampled) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Deploy to ${env}?`,
              requestedSchema: {
                type: "object",
                properties: { confirm: { type: "boolean" } },
                required: ["confirm"],
              },
            }),
            summary: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "Summarise" } }],
              maxTokens: 5,
            }),
          },
        });
      }
      return { content: [{ type: "text", text: `deployed to ${env}` }] };
    },
  );
  server.registerPrompt("greet", { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Hello ${who}` } }],
  }));
  server.registerResource("note", "note://one", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "one" }],
  }));
  return server;
}

const onInput: McpClientOptions["onInput"] = {
  elicitation: () => ({ action: "accept", content: { confirm: true } }),
  sampling: () => ({ role: "assistant", content: { type: "text", text: "ok" }, model: "m" }),
};

describe("McpClient against the official SDK v2 server (modern)", () => {
  const handler = createMcpHandler(build);
  const reach: McpClientOptions = {
    fetch: (input, init) => handler.fetch(new Request(input, init)),
    eraCache: false,
  };
  let client: McpClient;

  beforeAll(async () => {
    client = await McpClient.connect(URL_, { ...reach, onInput });
  });
  afterAll(async () => {
    await client.close();
    await handler.close();
  });

  it("should connect in the modern era and read server/discover", () => {
    expect(client.era).toBe("modern");
    expect(client.protocolVersion).toBe("2026-07-28");
    expect(client.server.serverInfo).toMatchObject({ name: "sdk-v2" });
    expect(client.server.instructions).toBe("An SDK v2 server");
  });

  it("should list tools with predicates and call them", async () => {
    const tools = await client.tools();
    expect(tools.map((t) => t.name)).toEqual(["echo", "deploy"]);
    const [echo, deploy] = tools;
    expect(echo).toMatchObject({ readOnly: true, destructive: false });
    expect(deploy).toMatchObject({ readOnly: false, destructive: true, idempotent: true });
    expect(await echo!.call({ text: "v2" })).toEqual([{ type: "text", text: "v2" }]);
  });

  it("should answer an elicitation and a sampling request in one input_required round", async () => {
    const deploy = (await client.tool("deploy"))!;
    expect(await deploy.call({ env: "prod" })).toEqual([
      { type: "text", text: "deployed to prod" },
    ]);
  });

  it("should get prompts and read resources", async () => {
    expect((await client.getPrompt("greet", { who: "v2" })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Hello v2" } },
    ]);
    expect((await client.readResource("note://one")).contents).toEqual([
      { uri: "note://one", mimeType: "text/plain", text: "one" },
    ]);
  });

  it("should receive list changes on a listen stream", async () => {
    const subscription = client.listen({ toolsListChanged: true });
    await subscription.acknowledged;
    handler.notify.toolsChanged();
    const next: IteratorResult<Notification> = await subscription.next();
    expect(next.value?.method).toBe("notifications/tools/list_changed");
    subscription.close();
  });
});

describe("McpClient against a low-level SDK v2 server that lists and answers what it likes", () => {
  const handler = createMcpHandler(() => {
    const server = new Server({ name: "loose", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", () => ({
      tools: [
        {
          name: "sloppy",
          inputSchema: { type: "object" },
          outputSchema: {
            type: "object",
            properties: { n: { type: "number" } },
            required: ["n"],
          },
        },
        // Listed without an inputSchema, as some servers do (the SDK's type wants one).
        { name: "schemaless" } as never,
        {
          name: "bad_header",
          inputSchema: {
            type: "object",
            properties: { r: { type: "string", "x-mcp-header": "bad name" } },
          },
        },
      ],
    }));
    server.setRequestHandler("tools/call", () => ({
      content: [{ type: "text", text: "x" }],
      structuredContent: { n: "not a number" },
    }));
    return server;
  });
  afterAll(() => handler.close());

  it("should leave out a tool with an invalid x-mcp-header, with a warning, and refuse invalid structured content", async () => {
    const warnings: string[] = [];
    const client = await McpClient.connect(URL_, {
      fetch: (input, init) => handler.fetch(new Request(input, init)),
      eraCache: false,
      onWarning: (message) => warnings.push(message),
    });
    const tools = await client.tools();
    expect(tools.map((t) => t.name)).toEqual(["sloppy", "schemaless"]);
    // A tool listed without an inputSchema still renders with an object schema.
    expect(toAnthropicTool(tools[1]!).input_schema).toEqual({ type: "object", properties: {} });
    expect(warnings).toEqual([expect.stringMatching(/^Tool bad_header excluded: .*header token/)]);
    expect(await tools[0]!.call()).toEqual({
      error: expect.stringContaining("Tool sloppy returned invalid structured content"),
    });
    await client.close();
  });
});
