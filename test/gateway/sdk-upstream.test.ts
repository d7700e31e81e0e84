import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { toNodeHandler } from "../../src/adapters/node.js";
import { McpClient } from "../../src/client/index.js";
import { proxyServer, sdkUpstream } from "../../src/gateway/index.js";
import { createMcpHandler, type McpHandler } from "../../src/index.js";

// An official SDK v1 McpServer object, in this process, mounted through sdkUpstream,
// proxyServer and createMcpHandler on node:http, and called by our client in both eras.

/** The SDK v1 server: a tool, one that asks its client, a prompt and a resource. */
function createSdkServer(): SdkMcpServer {
  const sdk = new SdkMcpServer({ name: "sdk-v1-server", version: "3.2.1" });
  sdk.registerTool(
    "add",
    {
      description: "Adds two numbers",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  sdk.registerTool("confirm", { inputSchema: { item: z.string() } }, async ({ item }) => {
    const answer = await sdk.server.elicitInput({
      message: `Delete ${item}?`,
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    });
    return {
      content: [{ type: "text", text: `${answer.action}:${JSON.stringify(answer.content)}` }],
    };
  });
  sdk.registerPrompt("greet", { argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Say hello to ${who}` } }],
  }));
  sdk.registerResource("motd", "sdk://motd", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "Hello from the SDK" }],
  }));
  return sdk;
}

describe("an official SDK v1 McpServer mounted in-process through the gateway", () => {
  let httpServer: Server;
  let mcp: McpHandler;
  let upstream: ReturnType<typeof sdkUpstream>;
  let url: string;

  beforeAll(async () => {
    upstream = sdkUpstream(createSdkServer());
    mcp = createMcpHandler(await proxyServer(upstream), { secret: "sdk-upstream" });
    httpServer = createServer(toNodeHandler(mcp));
    await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await mcp?.close();
    await upstream?.close();
    httpServer?.closeAllConnections();
    httpServer?.close();
  });

  describe.each(["modern", "legacy"] as const)("called by our client (%s)", (era) => {
    let client: McpClient;
    const asked: unknown[] = [];

    beforeAll(async () => {
      client = await McpClient.connect(url, {
        era,
        onInput: {
          elicitation: (params) => {
            asked.push(params);
            return { action: "accept", content: { ok: true } };
          },
        },
      });
    });
    afterAll(async () => {
      await client?.close();
    });

    it("should introduce the SDK server and list its tools, prompts and resources", async () => {
      expect(client.era).toBe(era);
      expect(client.server.serverInfo).toMatchObject({ name: "sdk-v1-server", version: "3.2.1" });
      expect((await client.tools()).map((tool) => tool.serverName)).toEqual(["add", "confirm"]);
      expect((await client.prompts()).map((prompt) => prompt.name)).toEqual(["greet"]);
      expect((await client.resources()).map((resource) => resource.uri)).toEqual(["sdk://motd"]);
    });

    it("should call its tool, get its prompt and read its resource", async () => {
      const sum = await client.callTool("add", { a: 20, b: 22 });
      expect(sum).toMatchObject({
        content: [{ type: "text", text: "42" }],
        structuredContent: { sum: 42 },
      });
      const invalid = await client.callTool("add", { a: "twenty" });
      expect(invalid.isError).toBe(true);
      const prompt = await client.getPrompt("greet", { who: "Grace" });
      expect(prompt.messages).toEqual([
        { role: "user", content: { type: "text", text: "Say hello to Grace" } },
      ]);
      const motd = await client.readResource("sdk://motd");
      expect(motd.contents).toEqual([
        { uri: "sdk://motd", mimeType: "text/plain", text: "Hello from the SDK" },
      ]);
    });

    it("should carry the SDK server's elicitation to the client and its answer back", async () => {
      const before = asked.length;
      const result = await client.callTool("confirm", { item: "report.txt" });
      expect(asked.length).toBe(before + 1);
      expect(asked.at(-1)).toMatchObject({ message: "Delete report.txt?" });
      expect(result.content).toEqual([{ type: "text", text: 'accept:{"ok":true}' }]);
    });
  });
});
