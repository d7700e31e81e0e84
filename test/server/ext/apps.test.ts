import { PassThrough } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { serveStdio } from "../../../src/adapters/stdio.js";
import { McpClient, toAnthropicTools, toOpenAITools } from "../../../src/client/index.js";
import { stdio } from "../../../src/client/stdio.js";
import {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  appToolMeta,
  createMcpHandler,
  McpServer,
  registerAppResource,
} from "../../../src/index.js";
import { assertExtSchema } from "../../helpers/ext-schema.js";
import { LEGACY_VERSION, legacyCall, legacyHeaders } from "../../helpers/legacy.js";
import { call, modernMeta, type Send, viaFetch } from "../../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../../helpers/spec.js";

const VIEW = "ui://adder/view.html";
const UI = {
  csp: { connectDomains: ["https://api.example.com"], resourceDomains: [] },
  permissions: { clipboardWrite: {} },
  domain: "adder.example-host.net",
  prefersBorder: true,
};

/** A server with one app: its view, a tool for the model and the app, and an app-only tool. */
function appServer(): McpServer {
  const server = new McpServer({ name: "apps", version: "1.0.0" });
  registerAppResource(server, {
    uri: VIEW,
    name: "adder",
    html: "<!doctype html><p>Adder</p>",
    ui: UI,
  });
  server.tool({ name: "adder", _meta: appToolMeta({ resourceUri: VIEW }) }, () => "opened");
  server.tool(
    {
      name: "adder_add",
      input: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
      _meta: appToolMeta({ resourceUri: VIEW, visibility: ["app"] }),
    },
    ({ a, b }) => `${Number(a) + Number(b)}`,
  );
  server.tool({ name: "plain" }, () => "plain");
  return server;
}

/** What every era must show of the app: declaration, listing, view and linked tools. */
function expectApp(
  capabilities: Record<string, unknown>,
  resources: Record<string, unknown>[],
  read: Record<string, unknown>,
  tools: Record<string, unknown>[],
) {
  const declared = (capabilities.extensions as Record<string, unknown>)[APPS_EXTENSION];
  expect(declared).toEqual({ mimeTypes: [APP_MIME_TYPE] });
  // The spec defines the host's declaration only; the server's takes the same shape.
  assertExtSchema("apps", "McpUiClientCapabilities", declared);
  const listed = resources.find((resource) => resource.uri === VIEW);
  expect(listed).toMatchObject({ mimeType: APP_MIME_TYPE, _meta: { ui: UI } });
  assertExtSchema("apps", "McpUiResourceMeta", (listed?._meta as { ui?: unknown } | undefined)?.ui);
  const [content] = read.contents as Record<string, unknown>[];
  expect(content).toEqual({
    uri: VIEW,
    mimeType: APP_MIME_TYPE,
    text: "<!doctype html><p>Adder</p>",
    _meta: { ui: UI },
  });
  const byName = new Map(tools.map((tool) => [tool.name, tool._meta as Record<string, unknown>]));
  expect(byName.get("adder")).toEqual({ ui: { resourceUri: VIEW }, "ui/resourceUri": VIEW });
  // Lists are the same for every caller: app-only tools are listed, hosts keep them from models.
  expect(byName.get("adder_add")?.ui).toEqual({ resourceUri: VIEW, visibility: ["app"] });
  for (const name of ["adder", "adder_add"])
    assertExtSchema("apps", "McpUiToolMeta", byName.get(name)?.ui);
}

describe("MCP Apps (io.modelcontextprotocol/ui), server", () => {
  it("should declare the extension and serve the view with its _meta.ui, modern era", async () => {
    const send: Send = viaFetch(createMcpHandler(appServer(), { secret: "s" }).fetch);
    const discover = await call(send, "server/discover");
    const resources = await call(send, "resources/list");
    const read = await call(send, "resources/read", { uri: VIEW });
    const tools = await call(send, "tools/list");
    expectApp(
      discover.result.capabilities as Record<string, unknown>,
      resources.result.resources as Record<string, unknown>[],
      read.result,
      tools.result.tools as Record<string, unknown>[],
    );
    const added = await call(send, "tools/call", { name: "adder_add", arguments: { a: 2, b: 3 } });
    expect(added.result.content).toEqual([{ type: "text", text: "5" }]);
  });

  it("should do the same for a legacy session", async () => {
    const send: Send = viaFetch(createMcpHandler(appServer(), { secret: "s" }).fetch);
    const response = await send({
      method: "POST",
      headers: legacyHeaders(undefined),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: LEGACY_VERSION,
          capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } },
          clientInfo: { name: "host", version: "1" },
        },
      }),
    });
    const initialize = JSON.parse(response.text);
    assertLegacyMessage(initialize, "initialize");
    const session = response.headers.get("mcp-session-id")!;
    await legacyCall(send, session, "notifications/initialized");
    const resources = await legacyCall(send, session, "resources/list", {});
    const read = await legacyCall(send, session, "resources/read", { uri: VIEW });
    const tools = await legacyCall(send, session, "tools/list", {});
    expectApp(
      initialize.result.capabilities,
      resources.result.resources as Record<string, unknown>[],
      read.result,
      tools.result.tools as Record<string, unknown>[],
    );
  });

  it("should do the same on stdio, in both eras", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const running = serveStdio(appServer(), { input, output, secret: "s", onError: () => {} });
    const lines: Record<string, unknown>[] = [];
    let buffer = "";
    output.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, at)));
        buffer = buffer.slice(at + 1);
      }
    });
    const ask = async (id: number, method: string, params: Record<string, unknown>) => {
      input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      await expect.poll(() => lines.find((line) => line.id === id)).toBeDefined();
      return lines.find((line) => line.id === id) as { result: Record<string, unknown> };
    };
    const meta = { _meta: modernMeta() };
    const modern = [
      await ask(1, "server/discover", meta),
      await ask(2, "resources/list", meta),
      await ask(3, "resources/read", { uri: VIEW, ...meta }),
      await ask(4, "tools/list", meta),
    ];
    const methods = ["server/discover", "resources/list", "resources/read", "tools/list"];
    for (const [i, message] of modern.entries()) assertModernMessage(message, methods[i]!);
    expectApp(
      modern[0]!.result.capabilities as Record<string, unknown>,
      modern[1]!.result.resources as Record<string, unknown>[],
      modern[2]!.result,
      modern[3]!.result.tools as Record<string, unknown>[],
    );
    const initialize = await ask(5, "initialize", {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    });
    assertLegacyMessage(initialize, "initialize");
    expect(initialize.result.capabilities).toMatchObject({
      extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } },
    });
    input.end();
    await running.done;
  });

  it("should refuse an app whose URI is not ui://, and declare nothing without an app", async () => {
    const server = new McpServer({ name: "none", version: "1" });
    expect(() =>
      registerAppResource(server, { uri: "https://x/view", name: "x", html: "" }),
    ).toThrow(/ui:\/\//);
    const send = viaFetch(createMcpHandler(server, { secret: "s" }).fetch);
    const { result } = await call(send, "server/discover");
    expect(
      (result.capabilities as { extensions?: Record<string, unknown> }).extensions?.[
        APPS_EXTENSION
      ],
    ).toBeUndefined();
  });
});

describe("MCP Apps, client", () => {
  let client: McpClient;
  beforeAll(async () => {
    const mcp = createMcpHandler(appServer(), { secret: "s" });
    client = await McpClient.connect("http://127.0.0.1/mcp", {
      fetch: (input, init) => mcp.fetch(new Request(input, init)),
    });
    return () => client.close();
  });

  it("should expose each tool's app link, and keep app-only tools from the model's tool lists", async () => {
    const tools = await client.tools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get("adder")?.ui).toEqual({ resourceUri: VIEW });
    expect(byName.get("adder")?.modelVisible).toBe(true);
    expect(byName.get("adder_add")?.ui).toEqual({ resourceUri: VIEW, visibility: ["app"] });
    expect(byName.get("adder_add")?.modelVisible).toBe(false);
    expect(byName.get("plain")?.ui).toBeUndefined();
    expect(toAnthropicTools(tools).map((tool) => tool.name)).toEqual(["adder", "plain"]);
    expect(toOpenAITools(tools).map((tool) => tool.function.name)).toEqual(["adder", "plain"]);
    expect(toOpenAITools(tools, { api: "responses" }).map((tool) => tool.name)).toEqual([
      "adder",
      "plain",
    ]);
    // A host still calls it for its app.
    expect((await client.callTool("adder_add", { a: 1, b: 2 })).content).toEqual([
      { type: "text", text: "3" },
    ]);
  });

  it("should read an app's view over stdio too", async () => {
    const over = await McpClient.connect(
      stdio({
        command: process.execPath,
        args: ["--import", "tsx", "test/server/ext/fixtures/app-stdio-server.ts"],
      }),
    );
    try {
      const [tool] = (await over.tools()).filter((t) => t.ui?.resourceUri);
      const read = await over.readResource(tool!.ui!.resourceUri!);
      expect((read.contents as { mimeType: string }[])[0]?.mimeType).toBe(APP_MIME_TYPE);
    } finally {
      await over.close();
    }
  });
});
