import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import type { LogMessage, Notification } from "../../src/client/types.js";
import { proxyServer, type Upstream, type UpstreamKey } from "../../src/gateway/index.js";
import { createMcpHandler, ErrorCode, McpError, McpServer } from "../../src/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import { assertSchema } from "../helpers/spec.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

// An upstream built with our own McpServer on node:http, reached by McpClient; the gateway
// (proxyServer over that client) mounted with createMcpHandler on another port; our McpClient
// downstream. Every combination of the two eras, upstream and downstream.

failOnUnhandled();

type Era = "modern" | "legacy";

/** What the upstream's handlers saw, for the tests to look at. */
interface Seen {
  slowStarted: boolean;
  slowAborted: boolean;
  /** The tools the upstream was asked to call, in order. */
  called: string[];
}

const INPUT_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { text: { type: "string", "x-vendor-hint": "shout" } },
  required: ["text"],
};

function upstreamServer(seen: Seen): McpServer {
  const server = new McpServer({ name: "upstream", version: "1.2.3", title: "Upstream" });
  server.tool(
    {
      name: "echo",
      title: "Echo",
      description: "Says it back",
      annotations: { readOnlyHint: true },
      _meta: { "example.com/kind": "echo" },
      input: INPUT_SCHEMA,
      output: { type: "object", properties: { said: { type: "string" } } },
    },
    async (args, ctx) => {
      await ctx.progress(1, 2, "halfway");
      await ctx.log("info", { heard: args.text }, "echo");
      await ctx.progress(2, 2);
      return {
        content: [{ type: "text", text: String(args.text) }],
        structuredContent: { said: args.text },
        _meta: { "example.com/trace": "t-1" },
      };
    },
  );
  server.tool({ name: "fail" }, () => {
    throw new McpError(-32050, "Upstream refused", { reason: "closed" });
  });
  server.tool({ name: "broken" }, () => ({
    content: [{ type: "text", text: "it broke" }],
    isError: true,
  }));
  server.tool({ name: "slow" }, async (_args, ctx) => {
    seen.slowStarted = true;
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    seen.slowAborted = true;
    return "never read";
  });
  server.tool({ name: "confirm" }, async (_args, ctx) => {
    const answer = await ctx.elicit("sure", {
      message: "Sure?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    });
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  server.prompt(
    {
      name: "greet",
      description: "A greeting",
      arguments: [
        {
          name: "who",
          required: true,
          complete: (value) => ["Alice", "Albert", "Bob"].filter((name) => name.startsWith(value)),
        },
      ],
    },
    ({ who }) => `Hello, ${who}`,
  );
  server.resource(
    { uri: "notes://readme", name: "readme", mimeType: "text/plain" },
    () => "Read me",
  );
  server.resourceTemplate(
    {
      uriTemplate: "notes://{id}",
      name: "note",
      mimeType: "text/plain",
      complete: { id: (value) => ["1", "12", "2"].filter((id) => id.startsWith(value)) },
    },
    (uri, { id }) => ({ uri, text: `Note ${id}` }),
  );
  return server;
}

describe.each([
  ["modern", "modern"],
  ["legacy", "legacy"],
  ["modern", "legacy"],
  ["legacy", "modern"],
] as [Era, Era][])("a gateway to a %s upstream, for a %s client", (upstreamEra, era) => {
  let seen: Seen;
  let upstream: McpServer;
  let mounts: Mounted[];
  let clients: McpClient[];
  let logs: LogMessage[];
  let asked: JsonObject[];
  let client: McpClient;

  beforeEach(async () => {
    seen = { slowStarted: false, slowAborted: false, called: [] };
    upstream = upstreamServer(seen);
    const onRequest = (info: { method: string; name?: string }) => {
      if (info.method === "tools/call" && info.name) seen.called.push(info.name);
    };
    mounts = [await mount("node", createMcpHandler(upstream, { onRequest }))];
    const upstreamClient = await McpClient.connect(mounts[0]!.url, {
      era: upstreamEra,
      capabilities: { elicitation: {} },
    });
    const gateway = await proxyServer(upstreamClient, { onError: (error) => console.error(error) });
    mounts.push(await mount("node", createMcpHandler(gateway)));
    logs = [];
    asked = [];
    client = await McpClient.connect(mounts[1]!.url, {
      era,
      logLevel: "debug",
      onLog: (message) => logs.push(message),
      onInput: {
        elicitation: (params) => {
          asked.push(params);
          return { action: "accept", content: { ok: true } };
        },
      },
      cache: false,
    });
    clients = [client, upstreamClient];
  });

  afterEach(async () => {
    for (const open of clients) await open.close();
    for (const mounted of mounts.reverse()) await mounted.close();
  });

  it("should mirror the upstream's tools, prompts, resources and templates as listed", async () => {
    const [tools, prompts, resources, templates] = await Promise.all([
      client.request("tools/list"),
      client.request("prompts/list"),
      client.request("resources/list"),
      client.request("resources/templates/list"),
    ]);
    for (const [def, result] of [
      ["ListToolsResult", tools],
      ["ListPromptsResult", prompts],
      ["ListResourcesResult", resources],
      ["ListResourceTemplatesResult", templates],
    ] as const) {
      assertSchema(era, def, result);
    }
    const echo = (tools.tools as Record<string, unknown>[]).find((tool) => tool.name === "echo");
    expect(echo).toEqual({
      name: "echo",
      title: "Echo",
      description: "Says it back",
      annotations: { readOnlyHint: true },
      _meta: { "example.com/kind": "echo" },
      inputSchema: INPUT_SCHEMA,
      outputSchema: { type: "object", properties: { said: { type: "string" } } },
    });
    expect((tools.tools as { name: string }[]).map((tool) => tool.name)).toEqual([
      "echo",
      "fail",
      "broken",
      "slow",
      "confirm",
    ]);
    expect(prompts.prompts).toEqual([
      {
        name: "greet",
        description: "A greeting",
        arguments: [{ name: "who", required: true }],
      },
    ]);
    expect(resources.resources).toEqual([
      { uri: "notes://readme", name: "readme", mimeType: "text/plain" },
    ]);
    expect(templates.resourceTemplates).toEqual([
      { uriTemplate: "notes://{id}", name: "note", mimeType: "text/plain" },
    ]);
    expect(client.server.serverInfo).toMatchObject({ name: "upstream", version: "1.2.3" });
    expect(client.server.capabilities).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
    });
  });

  it("should forward a call with its progress, log messages and structured result", async () => {
    const progress: unknown[] = [];
    const result = await client.callTool(
      "echo",
      { text: "hi" },
      { onProgress: (update) => progress.push(update) },
    );
    assertSchema(era, "CallToolResult", result);
    expect(result).toMatchObject({
      content: [{ type: "text", text: "hi" }],
      structuredContent: { said: "hi" },
      _meta: { "example.com/trace": "t-1" },
    });
    expect(progress).toEqual([
      { progress: 1, total: 2, message: "halfway" },
      { progress: 2, total: 2 },
    ]);
    expect(logs).toEqual([{ level: "info", logger: "echo", data: { heard: "hi" } }]);
  });

  it("should leave argument checks to the upstream", async () => {
    const result = await client.callTool("echo", { text: 42 });
    expect(seen.called).toEqual(["echo"]);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("Invalid arguments for tool echo");
  });

  it("should ask the client what the upstream asks mid-call, and answer the upstream", async () => {
    const result = await client.callTool("confirm");
    expect(asked).toMatchObject([{ message: "Sure?" }]);
    expect(result.content).toEqual([
      { type: "text", text: JSON.stringify({ action: "accept", content: { ok: true } }) },
    ]);
  });

  it("should answer with the upstream's error, and pass an isError result through", async () => {
    const failure = await client.callTool("fail").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({
      code: -32050,
      message: "Upstream refused",
      data: { reason: "closed" },
    });
    const broken = await client.callTool("broken");
    expect(broken).toMatchObject({ content: [{ type: "text", text: "it broke" }], isError: true });
  });

  it("should forward prompts, resource reads and completions", async () => {
    const prompt = await client.getPrompt("greet", { who: "Ada" });
    assertSchema(era, "GetPromptResult", prompt);
    expect(prompt.messages).toEqual([
      { role: "user", content: { type: "text", text: "Hello, Ada" } },
    ]);
    const readme = await client.readResource("notes://readme");
    assertSchema(era, "ReadResourceResult", readme);
    expect(readme.contents).toEqual([
      { uri: "notes://readme", mimeType: "text/plain", text: "Read me" },
    ]);
    const note = await client.readResource("notes://12");
    expect(note.contents).toEqual([{ uri: "notes://12", text: "Note 12" }]);
    const names = await client.complete(
      { type: "ref/prompt", name: "greet" },
      { name: "who", value: "Al" },
    );
    expect(names.values).toEqual(["Alice", "Albert"]);
    const ids = await client.complete(
      { type: "ref/resource", uri: "notes://{id}" },
      { name: "id", value: "1" },
    );
    expect(ids.values).toEqual(["1", "12"]);
  });

  it("should answer an unknown resource with the caller's era's error", async () => {
    const missing = await client.readResource("other://x").catch((error: unknown) => error);
    expect(missing).toMatchObject({
      code: era === "modern" ? ErrorCode.InvalidParams : ErrorCode.ResourceNotFound,
    });
  });

  it("should cancel the upstream call when the client gives up", async () => {
    const controller = new AbortController();
    const call = client.callTool("slow", {}, { signal: controller.signal }).catch((error) => error);
    await expect.poll(() => seen.slowStarted).toBe(true);
    controller.abort(new Error("gave up"));
    await call;
    await expect.poll(() => seen.slowAborted).toBe(true);
  });

  it("should pass the upstream's resource updates to the clients subscribed", async () => {
    const updates = client.listen({ resourceSubscriptions: ["notes://readme"] });
    await updates.acknowledged;
    upstream.notifyResourceUpdated("notes://readme");
    const { value } = await updates.next();
    updates.close();
    expect(value).toMatchObject({
      method: "notifications/resources/updated",
      params: { uri: "notes://readme" },
    });
  });

  it("should re-list and announce a list the upstream changed, and only then", async () => {
    const changes: Notification[] = [];
    const listening = client.listen({ toolsListChanged: true, promptsListChanged: true });
    await listening.acknowledged;
    const heard = (async () => {
      for await (const change of listening) changes.push(change);
    })();
    const added = upstream.tool({ name: "added", description: "New" }, () => "new");
    await expect
      .poll(() => changes.map((change) => change.method))
      .toEqual(["notifications/tools/list_changed"]);
    expect((await client.tools()).map((tool) => tool.name)).toContain("added");
    // The upstream announces a prompt list that is the same: nobody downstream hears of it.
    upstream.notifyPromptsListChanged();
    added.remove();
    await expect.poll(() => changes.length).toBe(2);
    expect(changes.map((change) => change.method)).toEqual([
      "notifications/tools/list_changed",
      "notifications/tools/list_changed",
    ]);
    expect((await client.tools()).map((tool) => tool.name)).not.toContain("added");
    listening.close();
    await heard;
  });
});

describe("a gateway whose upstream connection is replaced (a restart)", () => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const open of opened.reverse()) await open.close();
    opened.length = 0;
  });

  /** An upstream server with one tool of its own, served on node:http, and a client to it. */
  async function upstreamWith(tool: string): Promise<McpClient> {
    const server = new McpServer({ name: "upstream", version: "1.0.0" });
    server.tool({ name: tool }, () => `${tool} served`);
    const mounted = await mount("node", createMcpHandler(server));
    const upstreamClient = await McpClient.connect(mounted.url);
    opened.push(mounted, upstreamClient);
    return upstreamClient;
  }

  it("should mirror the new connection's lists, announce the change, and forward to it", async () => {
    let current = await upstreamWith("before");
    const listeners = new Set<(client: McpClient, key: UpstreamKey) => void>();
    const upstream: Upstream = {
      scope: "process",
      acquire: async () => ({ client: current, release: () => {} }),
      onConnect: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      close: async () => {},
    };
    const gateway = await proxyServer(upstream);
    const mounted = await mount("node", createMcpHandler(gateway));
    const client = await McpClient.connect(mounted.url, { cache: false });
    opened.push(mounted, client);
    expect((await client.tools()).map((tool) => tool.name)).toEqual(["before"]);
    const listening = client.listen({ toolsListChanged: true });
    await listening.acknowledged;
    current = await upstreamWith("after");
    for (const listener of listeners) listener(current, {});
    const { value } = await listening.next();
    expect(value?.method).toBe("notifications/tools/list_changed");
    await expect
      .poll(async () => (await client.tools()).map((tool) => tool.name))
      .toEqual(["after"]);
    expect((await client.callTool("after")).content).toEqual([
      { type: "text", text: "after served" },
    ]);
    listening.close();
  });
});
