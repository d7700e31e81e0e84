import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
  type McpStore,
  memoryStore,
} from "../../src/index.js";
import { LEGACY_VERSION, legacyHeaders, openSession } from "../helpers/legacy.js";
import { call, modernHeaders, modernMeta, readExchange, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount } from "../helpers/transports.js";

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Calls that reached their handler, so a test closes only once its call is really in flight. */
let started = 0;

function drainServer(): McpServer {
  const server = new McpServer({ name: "drain", version: "1.0.0" });
  server.tool(
    { name: "wait", input: { type: "object", properties: { ms: { type: "number" } } } },
    async ({ ms }, ctx) => {
      started++;
      // Stands for `ms` of work, cut short when the call is aborted.
      await Promise.race([
        new Promise((resolve) => setTimeout(resolve, ms ?? 0)),
        aborted(ctx.signal),
      ]);
      ctx.signal.throwIfAborted();
      return "waited";
    },
  );
  // Runs until stopped; with `progress`, its answer is an SSE stream.
  server.tool(
    { name: "stuck", input: { type: "object", properties: { progress: { type: "boolean" } } } },
    async ({ progress }, ctx) => {
      started++;
      if (progress) await ctx.progress(1, 2, "started");
      await aborted(ctx.signal);
      throw new Error("stopped");
    },
  );
  return server;
}

const mounts: Mounted[] = [];
async function start(options: McpHandlerOptions = {}): Promise<{ mcp: McpHandler; url: string }> {
  const mcp = createMcpHandler(drainServer(), { secret: "s", ...options });
  const mounted = await mount("node", mcp);
  mounts.push(mounted);
  return { mcp, url: mounted.url };
}
afterEach(async () => {
  await Promise.all(mounts.splice(0).map((mounted) => mounted.close()));
});

let nextId = 1;
function toolCall(name: string, args: Record<string, unknown>) {
  return {
    method: "POST",
    headers: modernHeaders("tools/call", name),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method: "tools/call",
      params: { name, arguments: args, _meta: { ...modernMeta(), progressToken: "p" } },
    }),
  };
}

describe("mcp.close({ graceMs }): a drain for rolling deploys", () => {
  it("should let a call in flight finish within the grace, and refuse new work with 503 + Connection: close", async () => {
    const { mcp, url } = await start();
    const before = started;
    const inFlight = fetch(url, toolCall("wait", { ms: 300 }));
    await expect.poll(() => started).toBe(before + 1);
    const closing = mcp.close({ graceMs: 5_000 });
    const refused = await viaUrl(url)(toolCall("wait", { ms: 0 }));
    const exchange = readExchange(refused, "tools/call");
    expect(exchange.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("connection")).toBe("close");
    expect(exchange.error).toMatchObject({ code: -32603, message: "Server is shutting down" });
    expect(await mcp.health()).toEqual({ ready: false, draining: true, store: "up" });
    const response = await inFlight;
    expect(response.status).toBe(200);
    const body = await response.json();
    assertModernMessage(body, "tools/call");
    expect(body.result.content).toEqual([{ type: "text", text: "waited" }]);
    await closing;
  });

  it("should answer a call still running when the grace ends with a retryable error, JSON or SSE", async () => {
    const { mcp, url } = await start();
    const before = started;
    const quiet = fetch(url, toolCall("stuck", {}));
    await expect.poll(() => started).toBe(before + 1);
    const streamed = await fetch(url, toolCall("stuck", { progress: true }));
    const reader = new SseReader(streamed.body!);
    assertModernMessage(await reader.next(), "notifications/progress");
    await mcp.close({ graceMs: 200 });
    const json = await quiet;
    expect(json.status).toBe(503);
    expect(json.headers.get("retry-after")).toBe("1");
    const jsonBody = await json.json();
    assertModernMessage(jsonBody, "tools/call");
    expect(jsonBody.error).toEqual({
      code: -32603,
      message: "Server is shutting down; retry the request",
      data: { retryable: true },
    });
    const last = await reader.next();
    assertModernMessage(last, "tools/call");
    expect(last).toMatchObject({ error: { code: -32603, data: { retryable: true } } });
    await reader.done;
  });

  it("should end listen streams with their result at once, not after the grace", async () => {
    const { mcp, url } = await start();
    const response = await fetch(url, {
      method: "POST",
      headers: modernHeaders("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
      }),
    });
    const reader = new SseReader(response.body!);
    await reader.next();
    const before = started;
    let answered = false;
    const inFlight = fetch(url, toolCall("wait", { ms: 400 })).then((response) => {
      answered = true;
      return response;
    });
    await expect.poll(() => started).toBe(before + 1);
    const closing = mcp.close({ graceMs: 5_000 });
    const end = await reader.next();
    // The listen stream ended first: it did not wait for the call in flight, nor for the grace.
    expect(answered).toBe(false);
    assertModernMessage(end, "subscriptions/listen");
    expect(end).toMatchObject({ id: 7, result: { resultType: "complete" } });
    await reader.done;
    expect((await inFlight).status).toBe(200);
    await closing;
  });

  it("should answer a legacy call still running at the end of the grace on its stream, logged, so a resumption elsewhere replays it", async () => {
    // Two handlers on one store behave as two processes.
    const store = memoryStore();
    const shared = { store: { ...store, close: async () => {} } satisfies McpStore };
    const first = await start(shared);
    const second = await start(shared);
    const sessionId = await openSession(viaUrl(first.url));
    const response = await fetch(first.url, {
      method: "POST",
      headers: legacyHeaders(sessionId),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 41,
        method: "tools/call",
        params: { name: "stuck", arguments: { progress: true }, _meta: { progressToken: "p" } },
      }),
    });
    const reader = new SseReader(response.body!);
    assertLegacyMessage(await reader.next(), "notifications/progress");
    const progressId = reader.lastEventId!;
    await first.mcp.close({ graceMs: 100 });
    const answer = await reader.next();
    assertLegacyMessage(answer, "tools/call");
    expect(answer).toMatchObject({ id: 41, error: { code: -32603, data: { retryable: true } } });
    await reader.done;
    // The client lost the answer, say, and resumes on the other process: replayed at once.
    const resumed = await fetch(second.url, {
      headers: {
        ...legacyHeaders(sessionId, LEGACY_VERSION),
        accept: "text/event-stream",
        "last-event-id": progressId,
      },
    });
    expect(resumed.status).toBe(200);
    const replay = new SseReader(resumed.body!);
    expect(await replay.next()).toMatchObject({ id: 41, error: { data: { retryable: true } } });
    await replay.done;
  });

  it("should say the store is down in health() while it cannot be reached", async () => {
    const store = memoryStore();
    let up = true;
    const flaky: McpStore = {
      ...store,
      ping: async () => {
        if (!up) throw new Error("unreachable");
      },
    };
    const { mcp } = await start({ store: flaky });
    expect(await mcp.health()).toEqual({ ready: true, draining: false, store: "up" });
    up = false;
    expect(await mcp.health()).toEqual({ ready: false, draining: false, store: "down" });
  });
});

describe("a drain with nothing in flight", () => {
  it("should resolve at once whatever the grace", async () => {
    const { mcp, url } = await start();
    const { status } = await call(viaUrl(url), "tools/list");
    expect(status).toBe(200);
    // A grace longer than the test's own timeout: waiting for it would fail the test.
    await mcp.close({ graceMs: 60_000 });
    expect(await mcp.health()).toMatchObject({ draining: true, ready: false });
  });
});
