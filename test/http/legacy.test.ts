import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, type McpHandler, type McpServer, memoryStore } from "../../src/index.js";
import { createFixtureServer, type Probe } from "../helpers/fixture-server.js";
import {
  LEGACY_VERSION,
  legacyCall,
  legacyHeaders,
  openSession,
  readLegacy,
} from "../helpers/legacy.js";
import { call, type Send, viaFetch } from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

describe.each(TRANSPORTS)("legacy era through %s", (transport) => {
  let mounted: Mounted;
  let send: Send;
  let mcp: McpHandler;
  let server: McpServer;
  const probe: Probe = { aborted: [], started: [] };

  /** Sends a request whose SSE response stays open, for streaming reads. */
  const stream = async (
    headers: Record<string, string>,
    body?: unknown,
    method = "POST",
    signal?: AbortSignal,
  ) => {
    const init: RequestInit = { method, headers, signal };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response =
      transport === "fetch"
        ? await mcp.fetch(new Request(mounted.url, init))
        : await fetch(mounted.url, init);
    return { response, reader: response.body ? new SseReader(response.body) : undefined };
  };
  const nextValid = async (reader: SseReader, method: string) => {
    const message = await reader.next();
    if (message) assertLegacyMessage(message, method);
    return message;
  };

  beforeAll(async () => {
    server = createFixtureServer(probe);
    mcp = createMcpHandler(server, { secret: "s", legacy: { maxSessions: 1_000 } });
    mounted = await mount(transport, mcp);
    send = mounted.send;
  });
  afterAll(() => mounted.close());

  describe("initialize", () => {
    it("should negotiate the client's version and open a session with a strong visible-ASCII id", async () => {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(undefined, "2025-06-18"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
          },
        }),
      });
      const exchange = readLegacy(response, "initialize");
      expect(exchange.result).toMatchObject({
        protocolVersion: "2025-06-18",
        serverInfo: { name: "fixture", version: "1.0.0" },
        instructions: "Fixture server for tests",
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, logging: {} },
      });
      const sessionId = response.headers.get("mcp-session-id") ?? "";
      expect(sessionId).toMatch(/^[\x21-\x7E]{22,}$/);
    });

    it("should answer an unsupported version with its latest legacy version", async () => {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(undefined, "2025-03-26"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2024-01-01",
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
          },
        }),
      });
      expect(readLegacy(response, "initialize").result.protocolVersion).toBe(LEGACY_VERSION);
    });

    it("should treat initialize carrying modern _meta as legacy", async () => {
      const response = await send({
        method: "POST",
        headers: legacyHeaders(),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: LEGACY_VERSION,
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("mcp-session-id")).toBeTruthy();
    });
  });

  describe("in a session", () => {
    it("should serve tools, prompts, resources and completion without modern fields", async () => {
      const session = await openSession(send);
      const tools = await legacyCall(send, session, "tools/list");
      expect((tools.result.tools as { name: string }[])[0]?.name).toBe("echo");
      expect(tools.result.ttlMs).toBeUndefined();
      const echo = await legacyCall(send, session, "tools/call", {
        name: "echo",
        arguments: { text: "hi" },
      });
      expect(echo.result).toEqual({ content: [{ type: "text", text: "hi" }] });
      const prompt = await legacyCall(send, session, "prompts/get", {
        name: "greet",
        arguments: { who: "Ada" },
      });
      expect(prompt.result.messages).toHaveLength(1);
      const read = await legacyCall(send, session, "resources/read", { uri: "test://static" });
      expect(read.result.contents).toEqual([
        { uri: "test://static", mimeType: "text/plain", text: "static text" },
      ]);
      const completion = await legacyCall(send, session, "completion/complete", {
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "b" },
      });
      expect(completion.result.completion).toMatchObject({ values: ["bob"] });
    });

    it("should answer an unknown resource with -32002", async () => {
      const session = await openSession(send);
      const { status, error } = await legacyCall(send, session, "resources/read", {
        uri: "test://missing",
      });
      expect(status).toBe(200);
      expect(error?.code).toBe(-32002);
    });

    it("should answer ping, logging/setLevel and resources/(un)subscribe with {}", async () => {
      const session = await openSession(send);
      for (const [method, params] of [
        ["ping", undefined],
        ["logging/setLevel", { level: "warning" }],
        ["resources/subscribe", { uri: "test://static" }],
        ["resources/unsubscribe", { uri: "test://static" }],
      ] as const) {
        const exchange = await legacyCall(send, session, method, params);
        expect(exchange.result, method).toEqual({});
      }
      const bad = await legacyCall(send, session, "logging/setLevel", { level: "loud" });
      expect(bad.error?.code).toBe(-32602);
    });

    it("should filter log messages by the session's level", async () => {
      const session = await openSession(send);
      await legacyCall(send, session, "logging/setLevel", { level: "warning" });
      const exchange = await legacyCall(send, session, "tools/call", {
        name: "steps",
        arguments: {},
      });
      const logs = exchange.messages.filter((m) => m.method === "notifications/message");
      expect(logs.map((m) => (m.params as { level: string }).level)).toEqual(["warning"]);
      const all = await openSession(send);
      const verbose = await legacyCall(send, all, "tools/call", { name: "steps", arguments: {} });
      expect(verbose.messages.filter((m) => m.method === "notifications/message")).toHaveLength(2);
    });

    it("should tell the tool when the client lacks a capability", async () => {
      const session = await openSession(send);
      const exchange = await legacyCall(send, session, "tools/call", {
        name: "confirm",
        arguments: {},
      });
      expect(exchange.result.isError).toBe(true);
      expect(JSON.stringify(exchange.result.content)).toContain("does not support elicitation");
    });
  });

  describe("session rules", () => {
    it("should answer a missing session id 400, an unknown one 404, and a bad version header 400", async () => {
      expect((await legacyCall(send, undefined, "tools/list")).status).toBe(400);
      const unknown = await legacyCall(send, "no-such-session", "tools/list");
      expect(unknown.status).toBe(404);
      expect(unknown.error?.code).toBe(-32600);
      const session = await openSession(send);
      const badVersion = await legacyCall(send, session, "tools/list", undefined, {
        "mcp-protocol-version": "1999-01-01",
      });
      expect(badVersion.status).toBe(400);
      const { "mcp-protocol-version": _drop, ...noVersion } = legacyHeaders(session);
      const absent = await send({
        method: "POST",
        headers: noVersion,
        body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
      });
      expect(absent.status).toBe(200);
    });

    it("should end a session on DELETE, and answer 404 afterwards and to a second DELETE", async () => {
      const session = await openSession(send);
      const first = await send({ method: "DELETE", headers: legacyHeaders(session) });
      expect(first.status).toBe(200);
      expect((await legacyCall(send, session, "tools/list")).status).toBe(404);
      expect((await send({ method: "DELETE", headers: legacyHeaders(session) })).status).toBe(404);
      // The endpoint keeps serving everyone else, both eras.
      expect((await call(send, "tools/list")).status).toBe(200);
    });

    it("should answer a reply to an unknown server request with 404", async () => {
      const session = await openSession(send);
      const response = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({ jsonrpc: "2.0", id: "s999-nope", result: {} }),
      });
      expect(response.status).toBe(404);
      expect(JSON.parse(response.text).error.code).toBe(-32600);
    });
  });

  describe("streams", () => {
    it("should send a server request on the POST stream and resume with the client's answer", async () => {
      const session = await openSession(send, { elicitation: {} });
      const { response, reader } = await stream(legacyHeaders(session), {
        jsonrpc: "2.0",
        id: 77,
        method: "tools/call",
        params: { name: "confirm", arguments: { item: "x" } },
      });
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      const request = await nextValid(reader!, "tools/call");
      expect(request).toMatchObject({
        method: "elicitation/create",
        params: { message: "Delete x?" },
      });
      const answer = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: request?.id,
          result: { action: "accept", content: { ok: true } },
        }),
      });
      expect(answer.status).toBe(202);
      const final = await nextValid(reader!, "tools/call");
      expect(final).toMatchObject({
        id: 77,
        result: { structuredContent: { action: "accept", content: { ok: true }, rounds: 1 } },
      });
    });

    it("should abort the handler on notifications/cancelled", async () => {
      const session = await openSession(send);
      const before = probe.aborted.length;
      const { reader } = await stream(legacyHeaders(session), {
        jsonrpc: "2.0",
        id: "slow-1",
        method: "tools/call",
        params: { name: "slow", arguments: {}, _meta: { progressToken: 1 } },
      });
      expect((await nextValid(reader!, "tools/call"))?.method).toBe("notifications/progress");
      const cancelled = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "slow-1", reason: "test" },
        }),
      });
      expect(cancelled.status).toBe(202);
      await expect.poll(() => probe.aborted.length).toBe(before + 1);
    });

    it("should deliver list changes and subscribed resource updates on the GET stream, one stream per session", async () => {
      const session = await openSession(send);
      await legacyCall(send, session, "resources/subscribe", { uri: "test://static" });
      const { response, reader } = await stream(
        { ...legacyHeaders(session), accept: "text/event-stream" },
        undefined,
        "GET",
      );
      expect(response.status).toBe(200);
      const second = await stream(
        { ...legacyHeaders(session), accept: "text/event-stream" },
        undefined,
        "GET",
      );
      expect(second.response.status).toBe(409);
      const noAccept = await stream(
        { ...legacyHeaders(session), accept: "application/json" },
        undefined,
        "GET",
      );
      expect(noAccept.response.status).toBe(406);
      server.notifyResourceUpdated("test://other");
      server.notifyToolsListChanged();
      server.notifyResourceUpdated("test://static");
      expect(await nextValid(reader!, "")).toEqual({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
      });
      expect(await nextValid(reader!, "")).toEqual({
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "test://static" },
      });
      await send({ method: "DELETE", headers: legacyHeaders(session) });
      await reader!.done;
    });

    it("should replay exactly what a cut GET stream missed after Last-Event-ID", async () => {
      const session = await openSession(send);
      const headers = { ...legacyHeaders(session), accept: "text/event-stream" };
      const first = await stream(headers, undefined, "GET");
      server.notifyToolsListChanged();
      expect((await first.reader!.next())?.method).toBe("notifications/tools/list_changed");
      const lastEventId = first.reader!.lastEventId!;
      expect(lastEventId).toBeTruthy();
      await first.reader!.cancel();
      server.notifyPromptsListChanged();
      server.notifyResourcesListChanged();
      const resumed = await stream({ ...headers, "last-event-id": lastEventId }, undefined, "GET");
      expect(resumed.response.status).toBe(200);
      expect((await resumed.reader!.next())?.method).toBe("notifications/prompts/list_changed");
      expect((await resumed.reader!.next())?.method).toBe("notifications/resources/list_changed");
      server.notifyToolsListChanged();
      expect((await resumed.reader!.next())?.method).toBe("notifications/tools/list_changed");
      expect(await resumed.reader!.next(200)).toBeUndefined();
      // Another session's event id replays nothing of this one.
      const other = await openSession(send);
      const foreign = await stream(
        { ...legacyHeaders(other), accept: "text/event-stream", "last-event-id": lastEventId },
        undefined,
        "GET",
      );
      expect(await foreign.reader!.next(200)).toBeUndefined();
      await send({ method: "DELETE", headers: legacyHeaders(session) });
      await send({ method: "DELETE", headers: legacyHeaders(other) });
    });
  });
});

describe("legacy options", () => {
  it("should evict the longest idle session beyond maxSessions", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      legacy: { maxSessions: 2 },
    });
    const send = (await mount("fetch", mcp)).send;
    const a = await openSession(send);
    const b = await openSession(send);
    await legacyCall(send, a, "ping");
    const c = await openSession(send);
    expect((await legacyCall(send, b, "ping")).status).toBe(404);
    expect((await legacyCall(send, a, "ping")).status).toBe(200);
    expect((await legacyCall(send, c, "ping")).status).toBe(200);
    await mcp.close();
  });

  it("should serve legacy clients without sessions in stateless mode", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      legacy: { stateless: true },
    });
    const send = (await mount("fetch", mcp)).send;
    const init = await send({
      method: "POST",
      headers: legacyHeaders(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: LEGACY_VERSION,
          capabilities: {},
          clientInfo: { name: "c", version: "1" },
        },
      }),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get("mcp-session-id")).toBeNull();
    const echo = await legacyCall(send, undefined, "tools/call", {
      name: "echo",
      arguments: { text: "stateless" },
    });
    expect(echo.result.content).toEqual([{ type: "text", text: "stateless" }]);
    expect((await send({ method: "GET", headers: { accept: "text/event-stream" } })).status).toBe(
      405,
    );
    await mcp.close();
  });

  it("should expire idle sessions", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      store: memoryStore({ sessionIdleMs: 100 }),
    });
    const send = (await mount("fetch", mcp)).send;
    const session = await openSession(send);
    expect((await legacyCall(send, session, "ping")).status).toBe(200);
    // The idle time (100 ms) runs out; polling with a ping would keep the session alive.
    await sleep(150);
    expect((await legacyCall(send, session, "ping")).status).toBe(404);
    await mcp.close();
  });

  it("should end a server request the client never answers with a clear error after the timeout", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      legacy: { requestTimeoutMs: 100 },
    });
    const mounted = await mount("fetch", mcp);
    const session = await openSession(mounted.send, { elicitation: {} });
    const exchange = await legacyCall(mounted.send, session, "tools/call", {
      name: "confirm",
      arguments: {},
    });
    expect(exchange.messages[0]).toMatchObject({ method: "elicitation/create" });
    expect(exchange.result.isError).toBe(true);
    expect(JSON.stringify(exchange.result.content)).toContain(
      "did not answer elicitation/create within 100 ms",
    );
    await mcp.close();
  });

  it("should answer legacy requests 503 with Retry-After while the session store is down, and keep serving modern ones", async () => {
    const store = memoryStore();
    let down = false;
    const sessions = store.sessions;
    const failing = {
      ...store,
      sessions: {
        create: (record: Parameters<typeof sessions.create>[0], max: number) =>
          down ? Promise.reject(new Error("store down")) : sessions.create(record, max),
        get: (id: string) => (down ? Promise.reject(new Error("store down")) : sessions.get(id)),
        idleMs: sessions.idleMs,
        update: sessions.update,
        exists: sessions.exists,
        delete: sessions.delete,
      },
    };
    const errors: unknown[] = [];
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      store: failing,
      onError: (e) => errors.push(e),
    });
    const send = (await mount("fetch", mcp)).send;
    const session = await openSession(send);
    down = true;
    const refused = await send({
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(refused.text)).toMatchObject({ id: 1, error: { code: -32603 } });
    expect(
      (await call(send, "tools/call", { name: "echo", arguments: { text: "modern" } })).result
        .content,
    ).toEqual([{ type: "text", text: "modern" }]);
    expect(errors.some((e) => (e as Error).message === "store down")).toBe(true);
    down = false;
    expect((await legacyCall(send, session, "ping")).status).toBe(200);
    await mcp.close();
  });

  it("should let go of a GET stream whose client left once its session expires", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      store: memoryStore({ sessionIdleMs: 100 }),
      legacy: { sweepIntervalMs: 50 },
    });
    const session = await openSession(viaFetch(mcp.fetch));
    const response = await mcp.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "GET",
        headers: { ...legacyHeaders(session), accept: "text/event-stream" },
      }),
    );
    const reader = new SseReader(response.body!);
    expect(mcp.stats()).toEqual({ streams: 1, sessionsHeld: 1 });
    await reader.cancel();
    // Detached but kept for a resumption while the session lives.
    expect(mcp.stats().sessionsHeld).toBe(1);
    await expect.poll(() => mcp.stats()).toEqual({ streams: 0, sessionsHeld: 0 });
    // The runtime is gone: a resumption now finds no session, rather than a stream kept forever.
    const resumed = await mcp.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "GET",
        headers: { ...legacyHeaders(session), accept: "text/event-stream" },
      }),
    );
    expect(resumed.status).toBe(404);
    await mcp.close();
  });
});
