import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleApp } from "../../examples/express/app.js";

describe("the official modern client (@modelcontextprotocol/client) against examples/express", () => {
  let httpServer: Server;
  let mcp: ReturnType<typeof createExampleApp>["mcp"];
  let url: URL;
  const elicited: unknown[] = [];

  async function connect(): Promise<Client> {
    const client = new Client(
      { name: "interop-test", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: { form: {} } },
      },
    );
    client.setRequestHandler("elicitation/create", async (request) => {
      elicited.push(request.params);
      return { action: "accept", content: { confirm: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  }

  beforeAll(async () => {
    const example = createExampleApp({ secret: "interop" });
    mcp = example.mcp;
    httpServer = example.app.listen(0, "127.0.0.1");
    await new Promise((resolve) => httpServer.once("listening", resolve));
    url = new URL(`http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await mcp.close();
    httpServer.closeAllConnections();
    httpServer.close();
  });

  it("should connect in the modern era and read the server's identity", async () => {
    const client = await connect();
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getServerVersion()).toMatchObject({
      name: "mcp-mount-example",
      version: "0.1.0",
    });
    expect(client.getInstructions()).toContain("Utility tools");
    await client.close();
  });

  it("should list and call tools", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "echo",
      "add",
      "countdown",
      "plan_trip",
      "adder",
      "adder_add",
      "whoami",
    ]);
    const echoed = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(echoed.content).toEqual([{ type: "text", text: "hello" }]);
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    expect(sum.structuredContent).toEqual({ sum: 5 });
    const invalid = await client.callTool({ name: "echo", arguments: {} });
    expect(invalid.isError).toBe(true);
    await client.close();
  });

  it("should stream progress to the client's callback", async () => {
    const client = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: "countdown", arguments: { n: 3 } },
      { onprogress: (event: { progress: number }) => progress.push(event.progress) },
    );
    expect(result.content).toEqual([{ type: "text", text: "Lift-off!" }]);
    expect(progress).toEqual([1, 2, 3]);
    await client.close();
  });

  it("should complete an elicitation round trip through input_required", async () => {
    const client = await connect();
    const before = elicited.length;
    const result = await client.callTool({ name: "plan_trip", arguments: { city: "Lisbon" } });
    expect(result.content).toEqual([{ type: "text", text: "Booked: three days in Lisbon." }]);
    expect(elicited.length).toBe(before + 1);
    expect(elicited.at(-1)).toMatchObject({ message: "Plan a trip to Lisbon?" });
    await client.close();
  });

  it("should get prompts and complete their arguments", async () => {
    const client = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["summarize"]);
    const prompt = await client.getPrompt({
      name: "summarize",
      arguments: { text: "MCP", style: "brief" },
    });
    expect(prompt.messages[0]?.content).toEqual({
      type: "text",
      text: "Summarise the following text (brief):\n\nMCP",
    });
    const completion = await client.complete({
      ref: { type: "ref/prompt", name: "summarize" },
      argument: { name: "style", value: "b" },
    });
    expect(completion.completion.values).toEqual(["brief", "bullet points"]);
    await client.close();
  });

  it("should list and read resources and templates", async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([
      "notes://index",
      "ui://mcp-mount-example/adder.html",
      "notes://1",
      "notes://2",
    ]);
    const index = await client.readResource({ uri: "notes://index" });
    expect(index.contents).toEqual([
      { uri: "notes://index", mimeType: "text/plain", text: "1: Buy milk\n2: Write the MCP talk" },
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(["notes://{id}"]);
    const note = await client.readResource({ uri: "notes://2" });
    expect(note.contents[0]).toMatchObject({ text: "Write the MCP talk" });
    const ids = await client.complete({
      ref: { type: "ref/resource", uri: "notes://{id}" },
      argument: { name: "id", value: "" },
    });
    expect(ids.completion.values).toEqual(["1", "2"]);
    await client.close();
  });
});
