import { PassThrough } from "node:stream";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { serveStdio } from "../../src/adapters/stdio.js";
import { McpServer } from "../../src/index.js";
import type { Probe } from "../helpers/fixture-server.js";
import { modernMeta } from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import { assertLegacyMessage, assertModernMessage } from "../helpers/spec.js";
import { stdioPipes } from "../helpers/stdio-pipes.js";

/** The example server as a child process, the way a desktop client starts it. */
const CHILD = {
  command: process.execPath,
  args: ["--import", "tsx", "examples/stdio/server.ts"],
  env: { ...process.env, MCP_SECRET: "stdio" } as Record<string, string>,
};

describe("serveStdio", () => {
  it("should answer a malformed line with -32700 and keep reading", async () => {
    const io = stdioPipes();
    io.send("{not json");
    io.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: modernMeta() } });
    const error = await io.waitFor((line) => "error" in line);
    expect(error).toEqual({
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error: line is not valid JSON" },
    });
    const discover = await io.waitFor((line) => line.id === 1);
    assertModernMessage(discover, "server/discover");
    io.input.end();
    await io.running.done;
  });

  it("should let a call running when stdin ends answer before closing", async () => {
    const server = new McpServer({ name: "late", version: "1.0.0" });
    server.tool({ name: "late" }, async () => {
      // Still working when stdin ends.
      await new Promise((resolve) => setTimeout(resolve, 300));
      return "done late";
    });
    const input = new PassThrough();
    const output = new PassThrough();
    let written = "";
    output.on("data", (chunk: Buffer) => (written += chunk.toString()));
    const running = serveStdio(server, { input, output, secret: "s", onError: () => {} });
    input.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "late", arguments: {}, _meta: modernMeta() },
      })}\n`,
    );
    input.end();
    await running.done;
    const answer = JSON.parse(written.trim());
    assertModernMessage(answer, "tools/call");
    expect(answer).toMatchObject({
      id: 7,
      result: { content: [{ type: "text", text: "done late" }] },
    });
  });

  it("should serve both eras on one channel", async () => {
    const io = stdioPipes();
    io.send({
      jsonrpc: "2.0",
      id: "m1",
      method: "tools/call",
      params: { name: "echo", arguments: { text: "modern" }, _meta: modernMeta() },
    });
    io.send({
      jsonrpc: "2.0",
      id: "l0",
      method: "initialize",
      params: {
        protocolVersion: "2024-11-05",
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      },
    });
    io.send({
      jsonrpc: "2.0",
      id: "l1",
      method: "tools/call",
      params: { name: "echo", arguments: { text: "legacy" } },
    });
    const modern = await io.waitFor((line) => line.id === "m1");
    assertModernMessage(modern, "tools/call");
    expect(modern).toMatchObject({
      result: { resultType: "complete", content: [{ type: "text", text: "modern" }] },
    });
    expect(await io.waitFor((line) => line.id === "l0")).toMatchObject({
      result: { protocolVersion: "2024-11-05" },
    });
    const legacy = await io.waitFor((line) => line.id === "l1");
    assertLegacyMessage(legacy, "tools/call");
    expect(legacy).toEqual({
      jsonrpc: "2.0",
      id: "l1",
      result: { content: [{ type: "text", text: "legacy" }] },
    });
    io.input.end();
    await io.running.done;
  });

  it("should tell listen subscriptions apart by subscriptionId and end one on notifications/cancelled", async () => {
    const io = stdioPipes();
    io.send({
      jsonrpc: "2.0",
      id: 10,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
    });
    io.send({
      jsonrpc: "2.0",
      id: 11,
      method: "subscriptions/listen",
      params: {
        notifications: { promptsListChanged: true, toolsListChanged: true },
        _meta: modernMeta(),
      },
    });
    await io.waitFor(
      (line) =>
        (line.params as { _meta?: Record<string, unknown> })?._meta?.[
          "io.modelcontextprotocol/subscriptionId"
        ] === 11,
    );
    io.server.notifyToolsListChanged();
    const tagged = (id: number) => (line: Record<string, unknown>) =>
      line.method === "notifications/tools/list_changed" &&
      (line.params as { _meta: Record<string, unknown> })._meta[
        "io.modelcontextprotocol/subscriptionId"
      ] === id;
    await io.waitFor(tagged(10));
    await io.waitFor(tagged(11));
    io.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 10 } });
    // Lines are read in order: once a later request is answered, the cancellation was read.
    io.send({ jsonrpc: "2.0", id: 12, method: "server/discover", params: { _meta: modernMeta() } });
    await io.waitFor((line) => line.id === 12);
    const before = io.lines.length;
    io.server.notifyToolsListChanged();
    await expect.poll(() => io.lines.slice(before).filter(tagged(11))).toHaveLength(1);
    expect(io.lines.slice(before).filter(tagged(10))).toHaveLength(0);
    for (const line of io.lines)
      assertModernMessage(line, line.id === 12 ? "server/discover" : "subscriptions/listen");
    io.input.end();
    await io.running.done;
  });

  it("should abort a request on notifications/cancelled and send no response for it", async () => {
    const probe: Probe = { aborted: [], started: [] };
    const io = stdioPipes(probe);
    io.send({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "slow", arguments: {}, _meta: modernMeta({}, { progressToken: "p" }) },
    });
    await io.waitFor((line) => line.method === "notifications/progress");
    io.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } });
    await expect.poll(() => probe.aborted).toEqual(["slow"]);
    // Time for a response to come out, had the aborted request sent one.
    await sleep(50);
    expect(io.lines.some((line) => line.id === 5)).toBe(false);
    io.input.end();
    await io.running.done;
  });
});

describe("stdio interop with the official clients (examples/stdio as a child process)", () => {
  it("should serve the v1 client: tools, prompts, resources and a server-initiated elicitation", async () => {
    const client = new Client(
      { name: "v1-stdio", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { confirm: true },
    }));
    await client.connect(new StdioClientTransport({ ...CHILD, stderr: "pipe" }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["echo", "add", "countdown", "plan_trip"]);
    expect(
      await client.callTool({ name: "echo", arguments: { text: "over stdio" } }),
    ).toMatchObject({ content: [{ text: "over stdio" }] });
    expect(await client.callTool({ name: "plan_trip", arguments: { city: "Oslo" } })).toMatchObject(
      { content: [{ text: "Booked: three days in Oslo." }] },
    );
    const prompt = await client.getPrompt({ name: "summarize", arguments: { text: "t" } });
    expect(prompt.messages).toHaveLength(1);
    const note = await client.readResource({ uri: "notes://1" });
    expect(note.contents[0]).toMatchObject({ text: "Buy milk" });
    await client.close();
  });

  it("should serve the modern client with MRTR over stdio", async () => {
    const client = new ModernClient(
      { name: "v2-stdio", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: { form: {} } },
      },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { confirm: true },
    }));
    await client.connect(new ModernStdio({ ...CHILD, stderr: "pipe" }));
    expect(client.getProtocolEra()).toBe("modern");
    expect(
      await client.callTool({ name: "echo", arguments: { text: "modern stdio" } }),
    ).toMatchObject({ content: [{ text: "modern stdio" }] });
    expect(await client.callTool({ name: "plan_trip", arguments: { city: "Rome" } })).toMatchObject(
      { content: [{ text: "Booked: three days in Rome." }] },
    );
    await client.close();
  });
});
