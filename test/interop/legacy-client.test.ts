import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, type McpHandler, type McpServer } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { sleep } from "../helpers/sleep.js";

/** How long a notification may take to reach the client through its GET stream. */
const DELIVERY = { timeout: 5_000 };

describe("the official legacy client (@modelcontextprotocol/sdk v1) against a dual-era endpoint", () => {
  let httpServer: Server;
  let mcp: McpHandler;
  let server: McpServer;
  let url: URL;
  /** Open GET responses, so a test can cut the standalone stream as a network would. */
  const getStreams = new Set<ServerResponse>();

  beforeAll(async () => {
    server = createFixtureServer();
    mcp = createMcpHandler(server, { secret: "interop" });
    const handle = toNodeHandler(mcp);
    httpServer = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method === "GET") {
        getStreams.add(res);
        res.once("close", () => getStreams.delete(res));
      }
      void handle(req, res);
    });
    await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await mcp.close();
    httpServer.closeAllConnections();
    httpServer.close();
  });

  async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client(
      { name: "legacy-interop", version: "1.0.0" },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => ({
      action: "accept",
      content: request.params.message === "First?" ? { v: "from-user" } : { ok: true },
    }));
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "from-model" },
      model: "test-model",
      stopReason: "endTurn",
    }));
    const transport = new StreamableHTTPClientTransport(url, {
      reconnectionOptions: {
        initialReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 10,
      },
    });
    await client.connect(transport);
    return { client, transport };
  }

  it("should initialize a 2025-11-25 session and use tools, prompts, resources and completion", async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toBeTruthy();
    expect(client.getServerVersion()).toMatchObject({ name: "fixture" });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("echo");
    expect(await client.callTool({ name: "echo", arguments: { text: "v1" } })).toMatchObject({
      content: [{ type: "text", text: "v1" }],
    });
    const prompt = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: "Say hello to Ada" });
    const resources = await client.listResources();
    expect(resources.resources.map((resource) => resource.uri)).toContain("test://static");
    const item = await client.readResource({ uri: "test://items/9" });
    expect(item.contents[0]).toMatchObject({ text: '{"id":"9"}' });
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates[0]?.uriTemplate).toBe("test://items/{id}");
    const completion = await client.complete({
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "who", value: "al" },
    });
    expect(completion.completion.values).toEqual(["alice", "albert"]);
    await transport.terminateSession();
    await client.close();
  });

  it("should honour setLoggingLevel for log messages sent during a call", async () => {
    const { client, transport } = await connect();
    const levels: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      levels.push(notification.params.level);
    });
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "steps", arguments: {} });
    expect(levels).toEqual(["warning"]);
    await transport.terminateSession();
    await client.close();
  });

  it("should complete an elicitation and a sampling round trip through server requests", async () => {
    const { client, transport } = await connect();
    const result = await client.callTool({ name: "two_steps", arguments: {} });
    expect(result.structuredContent).toEqual({
      first: { v: "from-user" },
      second: { type: "text", text: "from-model" },
    });
    await transport.terminateSession();
    await client.close();
  });

  it("should deliver subscribed resource updates and list changes on the GET stream", async () => {
    const { client, transport } = await connect();
    const updated: string[] = [];
    let toolsChanged = 0;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      toolsChanged++;
    });
    await client.subscribeResource({ uri: "test://static" });
    await expect.poll(() => getStreams.size, DELIVERY).toBeGreaterThan(0);
    server.notifyResourceUpdated("test://binary");
    server.notifyResourceUpdated("test://static");
    server.notifyToolsListChanged();
    await expect.poll(() => [updated.length, toolsChanged], DELIVERY).toEqual([1, 1]);
    expect(updated).toEqual(["test://static"]);
    await transport.terminateSession();
    await client.close();
  });

  it("should resume a cut GET stream with Last-Event-ID, losing and repeating nothing", async () => {
    const { client, transport } = await connect();
    const seen: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      seen.push("tools");
    });
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      seen.push("prompts");
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      seen.push("resources");
    });
    await expect.poll(() => getStreams.size, DELIVERY).toBeGreaterThan(0);
    server.notifyToolsListChanged();
    await expect.poll(() => seen.length, DELIVERY).toBe(1);
    for (const res of getStreams) res.destroy();
    await expect.poll(() => getStreams.size, DELIVERY).toBe(0);
    server.notifyPromptsListChanged();
    server.notifyResourcesListChanged();
    await expect.poll(() => seen.length, DELIVERY).toBe(3);
    server.notifyToolsListChanged();
    await expect.poll(() => seen.length, DELIVERY).toBe(4);
    // Time for a repeated notification to arrive, had the resumption replayed one.
    await sleep(200);
    expect(seen).toEqual(["tools", "prompts", "resources", "tools"]);
    await transport.terminateSession();
    await client.close();
  });

  it("should serve a modern and a legacy client interleaving calls on the same endpoint", async () => {
    const legacy = await connect();
    const modern = new ModernClient(
      { name: "modern-interop", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: { form: {} } },
      },
    );
    modern.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { ok: true },
    }));
    await modern.connect(new ModernTransport(url));
    expect(modern.getProtocolEra()).toBe("modern");
    const calls = [];
    for (let i = 0; i < 5; i++) {
      calls.push(legacy.client.callTool({ name: "echo", arguments: { text: `legacy-${i}` } }));
      calls.push(modern.callTool({ name: "echo", arguments: { text: `modern-${i}` } }));
      calls.push(legacy.client.callTool({ name: "confirm", arguments: { item: `l${i}` } }));
      calls.push(modern.callTool({ name: "confirm", arguments: { item: `m${i}` } }));
    }
    const results = (await Promise.all(calls)) as {
      content?: unknown;
      structuredContent?: unknown;
    }[];
    for (let i = 0; i < 5; i++) {
      expect(results[i * 4]?.content).toEqual([{ type: "text", text: `legacy-${i}` }]);
      expect(results[i * 4 + 1]?.content).toEqual([{ type: "text", text: `modern-${i}` }]);
      // Legacy answers through a server request (one round); modern through MRTR (two rounds).
      expect(results[i * 4 + 2]?.structuredContent).toMatchObject({ action: "accept", rounds: 1 });
      expect(results[i * 4 + 3]?.structuredContent).toMatchObject({ action: "accept", rounds: 2 });
    }
    await legacy.transport.terminateSession();
    await legacy.client.close();
    await modern.close();
  });
});
