import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  McpClient,
  type Tool,
  toAnthropicTool,
  toAnthropicTools,
  toOpenAITool,
  toOpenAITools,
} from "../../src/client/index.js";
import { type OurServer, startOurServer } from "./servers.js";

describe("tool renderings for model APIs", () => {
  let ours: OurServer;
  let client: McpClient;
  let tools: Tool[];

  beforeAll(async () => {
    ours = await startOurServer("fetch");
    client = await McpClient.connect(ours.url, { ...ours.reach, prefix: "fx_" });
    tools = await client.tools();
  });
  afterAll(async () => {
    await client.close();
    await ours.close();
  });

  it("should render Anthropic Messages tool entries under the prefixed name", () => {
    const echo = tools.find((tool) => tool.serverName === "echo")!;
    expect(toAnthropicTool(echo)).toEqual({
      name: "fx_echo",
      input_schema: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      },
    });
    expect(toAnthropicTools(tools)).toHaveLength(tools.length);
  });

  it("should render OpenAI function tools for Chat Completions and for Responses", () => {
    const greet = tools.find((tool) => tool.serverName === "typed")!;
    expect(toOpenAITool(greet)).toEqual({
      type: "function",
      function: { name: "fx_typed", parameters: greet.inputSchema, strict: false },
    });
    expect(toOpenAITool(greet, { api: "responses" })).toEqual({
      type: "function",
      name: "fx_typed",
      parameters: greet.inputSchema,
      strict: false,
    });
    expect(toOpenAITools(tools, { api: "responses" }).map((t) => t.name)).toEqual(
      tools.map((t) => t.name),
    );
  });
});

describe("what a Tool or client shows when logged or serialized", () => {
  it("should not carry the client's headers (tokens) in its enumerable fields", async () => {
    const ours = await startOurServer("fetch");
    const client = await McpClient.connect(ours.url, {
      ...ours.reach,
      headers: { authorization: "Bearer secret-token" },
    });
    const [tool] = await client.tools();
    expect(JSON.stringify(tool)).not.toContain("secret-token");
    expect(JSON.stringify(client)).not.toContain("secret-token");
    await client.close();
    await ours.close();
  });
});
