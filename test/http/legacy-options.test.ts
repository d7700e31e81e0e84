import { describe, expect, it } from "vitest";
import { createMcpHandler, memoryStore } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { LEGACY_VERSION, legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { call, viaFetch } from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import { SseReader } from "../helpers/stream.js";
import { mount } from "../helpers/transports.js";

// Legacy options of one handler (on fetch): session caps, stateless mode, idle expiry, timeouts,
// and a session store that fails.
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
        touch: (id: string) =>
          down ? Promise.reject(new Error("store down")) : sessions.touch(id),
        delete: sessions.delete,
        ofClient: sessions.ofClient,
        markActive: sessions.markActive,
        unmarkActive: sessions.unmarkActive,
        activeOwners: sessions.activeOwners,
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

  it("should read sessions through a store's own get when a wrapper spreads the memory store's", async () => {
    const store = memoryStore();
    let down = false;
    const { sessions } = store;
    // Spread: the wrapper carries every other method of the memory store, but its own get.
    const wrapped = {
      ...store,
      sessions: {
        ...sessions,
        get: (id: string, use?: Parameters<typeof sessions.get>[1]) =>
          down ? Promise.reject(new Error("store down")) : sessions.get(id, use),
      },
    };
    const errors: unknown[] = [];
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      store: wrapped,
      onError: (e) => errors.push(e),
    });
    const send = (await mount("fetch", mcp)).send;
    const session = await openSession(send);
    expect((await legacyCall(send, session, "ping")).status).toBe(200);
    down = true;
    expect((await legacyCall(send, session, "ping")).status).toBe(503);
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
