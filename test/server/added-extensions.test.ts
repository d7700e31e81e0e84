import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { serveStdio } from "../../src/adapters/stdio.js";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler, McpServer, memoryStore } from "../../src/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import {
  addExtension,
  type ExtensionHost,
  type ServerExtension,
} from "../../src/server/extension.js";
import { modernMeta } from "../helpers/modern.js";
import { type Mounted, mount } from "../helpers/transports.js";

// addExtension: an app's own extension, built for each handler that mounts the server (HTTP
// and stdio) from what that handler lends, taking part in its tool calls and its close.
// And tools registered with validate: false, whose schemas are advertised as given.

/** A server whose extension takes over calls of the tool "taken", counting hosts and closes. */
function extendedServer() {
  const server = new McpServer({ name: "extended", version: "1.0.0" });
  server.tool({ name: "taken" }, () => "the tool itself");
  const hosts: ExtensionHost[] = [];
  let closed = 0;
  const registration = addExtension(server, (host): ServerExtension => {
    hosts.push(host);
    return {
      id: "example.com/takeover",
      callTool: (call) =>
        call.tool.options.name === "taken"
          ? Promise.resolve({ content: [{ type: "text", text: "taken over" }] })
          : undefined,
      close: async () => {
        closed++;
      },
    };
  });
  return { server, hosts, registration, closed: () => closed };
}

describe("an extension added with addExtension", () => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const open of opened.reverse()) await open.close();
    opened.length = 0;
  });

  it("should be built with each HTTP handler's store, take over calls, and close with it", async () => {
    const { server, hosts, registration, closed } = extendedServer();
    const store = memoryStore();
    const mounted: Mounted = await mount("node", createMcpHandler(server, { store }));
    const client = await McpClient.connect(mounted.url);
    expect(hosts.map((host) => host.store)).toEqual([store]);
    expect((await client.callTool("taken")).content).toEqual([
      { type: "text", text: "taken over" },
    ]);
    await client.close();
    await mounted.close();
    expect(closed()).toBe(1);
    registration.remove();
    opened.push(await mount("node", createMcpHandler(server)));
    expect(hosts).toHaveLength(1);
  });

  it("should be built for a stdio session too", async () => {
    const { server, hosts, closed } = extendedServer();
    const input = new PassThrough();
    const output = new PassThrough();
    const running = serveStdio(server, { input, output, onError: () => {} });
    let written = "";
    output.on("data", (chunk: Buffer) => {
      written += chunk.toString();
    });
    const params = { name: "taken", arguments: {}, _meta: modernMeta() };
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params })}\n`);
    await expect.poll(() => written.includes("\n")).toBe(true);
    const answer = JSON.parse(written.slice(0, written.indexOf("\n"))) as { result: JsonObject };
    expect(answer.result.content).toEqual([{ type: "text", text: "taken over" }]);
    expect(hosts).toHaveLength(1);
    await running.close();
    expect(closed()).toBe(1);
  });
});

describe("a tool registered with validate: false", () => {
  const DRAFT_04 = {
    $schema: "http://json-schema.org/draft-04/schema#",
    type: "object",
    properties: { n: { type: "integer" } },
  };

  it("should advertise its schemas as given and check neither arguments nor results", async () => {
    const server = new McpServer({ name: "forwarding", version: "1.0.0" });
    expect(() => server.tool({ name: "checked", input: DRAFT_04 }, () => "")).toThrow(
      /Unsupported JSON Schema dialect/,
    );
    const received: unknown[] = [];
    server.tool(
      { name: "forwarded", input: DRAFT_04, output: DRAFT_04, validate: false },
      (args) => {
        received.push(args);
        return { content: [{ type: "text", text: "no structured content" }] };
      },
    );
    const tool = server.tools.get("forwarded");
    expect(tool?.definition).toEqual({
      name: "forwarded",
      inputSchema: DRAFT_04,
      outputSchema: DRAFT_04,
    });
    const mounted = await mount("node", createMcpHandler(server));
    const client = await McpClient.connect(mounted.url);
    try {
      const result = await client.callTool("forwarded", { n: "not a number" });
      expect(received).toEqual([{ n: "not a number" }]);
      expect(result.isError).toBeUndefined();
    } finally {
      await client.close();
      await mounted.close();
    }
  });
});
