import { afterEach, describe, expect, it } from "vitest";
import { bearerAuth } from "../../src/auth/index.js";
import { createMcpHandler, type McpHandler, McpServer } from "../../src/index.js";
import { createFixtureServer, type Probe } from "../helpers/fixture-server.js";
import { legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import {
  modernHeaders,
  modernMeta,
  readExchange,
  viaFetch,
  withBearer,
} from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount } from "../helpers/transports.js";

const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

function request(
  id: number | string,
  method: string,
  params: Record<string, unknown>,
  meta?: Record<string, unknown>,
) {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: modernMeta({}, meta) },
  });
}

async function open(
  url: string,
  id: number | string,
  notifications: Record<string, unknown>,
  signal?: AbortSignal,
) {
  const response = await fetch(url, {
    method: "POST",
    headers: modernHeaders("subscriptions/listen"),
    body: request(id, "subscriptions/listen", { notifications }),
    signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  return new SseReader(response.body!);
}

async function nextValid(reader: SseReader) {
  const message = await reader.next();
  if (message) assertModernMessage(message, "subscriptions/listen");
  return message;
}

describe.each(["fetch", "node"] as const)("subscriptions/listen through %s", (transport) => {
  let mounted: Mounted;
  let mcp: McpHandler;
  const probe: Probe = { aborted: [], started: [] };
  const server = createFixtureServer(probe);
  const setup = async (options = {}) => {
    mcp = createMcpHandler(server, { secret: "s", ...options });
    mounted = await mount(transport, mcp);
    // Through fetch the URL is not reachable by a socket: route via the handler.
    const url = mounted.url;
    return transport === "fetch"
      ? (id: number | string, filter: Record<string, unknown>, signal?: AbortSignal) =>
          mcp
            .fetch(
              new Request(url, {
                method: "POST",
                headers: modernHeaders("subscriptions/listen"),
                body: request(id, "subscriptions/listen", { notifications: filter }),
                signal,
              }),
            )
            .then((response) => new SseReader(response.body!))
      : (id: number | string, filter: Record<string, unknown>, signal?: AbortSignal) =>
          open(url, id, filter, signal);
  };
  afterEach(() => mounted.close());

  it("should acknowledge first, then deliver only what was asked for, tagged with the subscription id", async () => {
    const listen = await setup();
    const tools = await listen(7, {
      toolsListChanged: true,
      resourceSubscriptions: ["test://static"],
    });
    const prompts = await listen("p", { promptsListChanged: true });
    expect(await nextValid(tools)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { toolsListChanged: true, resourceSubscriptions: ["test://static"] },
        _meta: { [SUBSCRIPTION]: 7 },
      },
    });
    expect((await nextValid(prompts))?.method).toBe("notifications/subscriptions/acknowledged");

    server.notifyToolsListChanged();
    server.notifyResourceUpdated("test://other");
    server.notifyResourceUpdated("test://static");
    server.notifyPromptsListChanged();

    expect(await nextValid(tools)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
      params: { _meta: { [SUBSCRIPTION]: 7 } },
    });
    expect(await nextValid(tools)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "test://static", _meta: { [SUBSCRIPTION]: 7 } },
    });
    expect(await nextValid(prompts)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/prompts/list_changed",
      params: { _meta: { [SUBSCRIPTION]: "p" } },
    });
    // Nothing else arrives: the prompt change and the other resource were not asked for.
    expect(await tools.next(200)).toBeUndefined();
  });

  it("should notify when a tool is registered or removed after start", async () => {
    const listen = await setup();
    const stream = await listen(1, { toolsListChanged: true });
    await nextValid(stream);
    const registration = server.tool({ name: "late_tool" }, () => "late");
    expect((await nextValid(stream))?.method).toBe("notifications/tools/list_changed");
    registration.remove();
    expect((await nextValid(stream))?.method).toBe("notifications/tools/list_changed");
  });

  it("should end every stream with its own complete response on close()", async () => {
    const listen = await setup();
    const stream = await listen(42, { toolsListChanged: true });
    await nextValid(stream);
    await mcp.close();
    expect(await nextValid(stream)).toEqual({
      jsonrpc: "2.0",
      id: 42,
      result: {
        resultType: "complete",
        _meta: {
          [SUBSCRIPTION]: 42,
          "io.modelcontextprotocol/serverInfo": { name: "fixture", version: "1.0.0" },
        },
      },
    });
    await stream.done;
    expect(stream.ended).toBe(true);
  });

  it("should send keep-alive comments on quiet streams", async () => {
    const listen = await setup({ keepAliveMs: 50 });
    const stream = await listen(1, { toolsListChanged: true });
    await nextValid(stream);
    await expect.poll(() => stream.comments.length).toBeGreaterThan(0);
  });

  it("should reject a malformed filter with -32602", async () => {
    await setup();
    const response = await mcp.fetch(
      new Request(mounted.url, {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: request(1, "subscriptions/listen", { notifications: { toolsListChanged: "yes" } }),
      }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe(-32602);
  });

  it("should abort the handler and write nothing more when the client closes the stream", async () => {
    await setup();
    const controller = new AbortController();
    const body = request(5, "tools/call", { name: "slow", arguments: {} }, { progressToken: 1 });
    const headers = modernHeaders("tools/call", "slow");
    const response =
      transport === "fetch"
        ? await mcp.fetch(
            new Request(mounted.url, { method: "POST", headers, body, signal: controller.signal }),
          )
        : await fetch(mounted.url, { method: "POST", headers, body, signal: controller.signal });
    const reader = new SseReader(response.body!);
    expect((await reader.next())?.method).toBe("notifications/progress");
    const abortedBefore = probe.aborted.length;
    if (transport === "fetch") await response.body?.cancel().catch(() => {});
    controller.abort();
    await reader.done;
    await expect.poll(() => probe.aborted.length).toBe(abortedBefore + 1);
    expect(reader.pending).toBe(0);
  });
});

describe("stream limits", () => {
  it("should answer 503 with Retry-After beyond maxStreams, for listen and GET streams alike", async () => {
    const mcp = createMcpHandler(createFixtureServer(), { secret: "s", maxStreams: 1 });
    const listen = (id: number) =>
      mcp.fetch(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: modernHeaders("subscriptions/listen"),
          body: request(id, "subscriptions/listen", { notifications: { toolsListChanged: true } }),
        }),
      );
    const first = await listen(1);
    expect(first.status).toBe(200);
    const second = await listen(2);
    expect(second.status).toBe(503);
    expect(second.headers.get("retry-after")).toBe("5");
    expect((await second.json()).error.code).toBe(-32603);
    const session = await openSession(viaFetch(mcp.fetch));
    const get = await mcp.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "GET",
        headers: { ...legacyHeaders(session), accept: "text/event-stream" },
      }),
    );
    expect(get.status).toBe(503);
    await first.body?.cancel();
    expect(mcp.stats().streams).toBe(0);
    expect((await listen(3)).status).toBe(200);
    await mcp.close();
  });
});

describe.each(["node", "express"] as const)(
  "subscriptions/listen and resource scopes (%s)",
  (transport) => {
    let mounted: Mounted | undefined;
    afterEach(async () => {
      await mounted?.close();
      mounted = undefined;
    });

    function scopedServer(): McpServer {
      const server = new McpServer({ name: "scoped", version: "1.0.0" });
      server.resource(
        { uri: "notes://secret", name: "secret", scopes: ["notes:secret"] },
        () => "s",
      );
      server.resource({ uri: "notes://public", name: "public" }, () => "p");
      return server;
    }

    const auth = bearerAuth({
      authorizationServers: ["https://auth.example.com"],
      verify: (token) => ({
        issuer: "https://auth.example.com",
        subject: token,
        scopes: token === "strong" ? ["notes:secret"] : [],
      }),
    });

    it("should answer 403 insufficient_scope, as legacy resources/subscribe does, to a token without a resource's scope", async () => {
      mounted = await mount(transport, createMcpHandler(scopedServer(), { secret: "s", auth }));
      const weak = withBearer(mounted.send, "weak");
      const session = await openSession(weak);
      const legacy = await legacyCall(weak, session, "resources/subscribe", {
        uri: "notes://secret",
      });
      expect(legacy.status).toBe(403);
      const response = await fetch(mounted.url, {
        method: "POST",
        headers: { ...modernHeaders("subscriptions/listen"), authorization: "Bearer weak" },
        body: request(2, "subscriptions/listen", {
          notifications: { resourceSubscriptions: ["notes://public", "notes://secret"] },
        }),
      });
      // A granted stream never ends by itself: close it rather than wait on it.
      if (response.status === 200) await response.body?.cancel();
      expect(response.status).toBe(403);
      const { status, headers } = response;
      const modern = readExchange(
        { status, headers, text: await response.text() },
        "subscriptions/listen",
      );
      expect(modern.error?.code).toBe(legacy.error?.code);
      expect(modern.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
      expect(modern.headers.get("www-authenticate")).toContain('scope="notes:secret"');
    });

    it("should deliver a scoped resource's updates to a token holding its scope", async () => {
      const server = scopedServer();
      mounted = await mount(transport, createMcpHandler(server, { secret: "s", auth }));
      const listenAs = async (token: string, uris: string[]) => {
        const response = await fetch(mounted!.url, {
          method: "POST",
          headers: { ...modernHeaders("subscriptions/listen"), authorization: `Bearer ${token}` },
          body: request(1, "subscriptions/listen", {
            notifications: { resourceSubscriptions: uris },
          }),
        });
        expect(response.status).toBe(200);
        const reader = new SseReader(response.body!);
        expect((await nextValid(reader))?.method).toBe("notifications/subscriptions/acknowledged");
        return reader;
      };
      const strong = await listenAs("strong", ["notes://secret"]);
      const weak = await listenAs("weak", ["notes://public"]);
      server.notifyResourceUpdated("notes://secret");
      server.notifyResourceUpdated("notes://public");
      expect(await nextValid(strong)).toMatchObject({ params: { uri: "notes://secret" } });
      expect(await nextValid(weak)).toMatchObject({ params: { uri: "notes://public" } });
      await strong.cancel();
      await weak.cancel();
    });
  },
);
