import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type Cluster,
  type OpenStream,
  openStream,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { call, modernHeaders, modernMeta, type RawRequest, type Send } from "../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage, assertSchema } from "../helpers/spec.js";
import type { SseReader } from "../helpers/stream.js";

/** Generous waits: these suites share a loaded machine with every other suite. */
const WAIT_MS = 10_000;
/** Longest one request may take while Redis is down: an answer, never a hang. */
const REQUEST_MS = 5_000;
/** Longest wait for ioredis to reconnect once Redis is back (its backoff reaches 5 s). */
const RECOVERY_MS = 20_000;
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

/** A `Send` to `url` whose every request is aborted after {@link REQUEST_MS}. */
function bounded(url: string): Send {
  return async (request: RawRequest) => {
    const response = await fetch(url, { ...request, signal: AbortSignal.timeout(REQUEST_MS) });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

async function next(reader: SseReader, method = "") {
  const message = await reader.next(WAIT_MS);
  if (message) assertLegacyMessage(message, method);
  return message;
}

/** Polls `probe` until it returns true; false when `ms` pass first. A probe that throws is false. */
async function eventually(probe: () => Promise<boolean>, ms = RECOVERY_MS): Promise<boolean> {
  return expect
    .poll(() => probe().catch(() => false), { timeout: ms, interval: 200 })
    .toBe(true)
    .then(
      () => true,
      () => false,
    );
}

/** Opens a `subscriptions/listen` stream for tool list changes at `url`, acknowledged. */
async function listen(url: string, id: string): Promise<OpenStream> {
  const stream = await openStream(url, {
    method: "POST",
    headers: modernHeaders("subscriptions/listen"),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
    }),
  });
  expect(stream.response.status).toBe(200);
  const ack = await stream.reader.next(WAIT_MS);
  if (ack) assertModernMessage(ack, "subscriptions/listen");
  expect(ack?.method).toBe("notifications/subscriptions/acknowledged");
  return stream;
}

// One Redis node only, unlike the other fleet suites: these cases stop the one node the processes
// share (a whole-Redis outage) and start it back empty. On a Redis Cluster, losing one master is a
// failover that its replica absorbs (test/cluster/failover.test.ts), and moving a slot is a
// reshard (test/cluster/resharding.test.ts); an outage of every node is this suite's case again.
describe("failures across processes (Redis store, round-robin proxy)", () => {
  let cluster: Cluster;
  /** Sends through the proxy. */
  let proxy: Send;
  let redisRunning = true;

  const tool = (send: Send, session: string, name: string, args: Record<string, unknown> = {}) =>
    legacyCall(send, session, "tools/call", { name, arguments: args });
  const get = (url: string, session: string, lastEventId?: string) =>
    openStream(url, {
      method: "GET",
      headers: {
        ...legacyHeaders(session),
        accept: "text/event-stream",
        ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
      },
    });
  /** A modern tools/call on `url` that must answer correctly. */
  const modernEcho = async (send: Send, text: string) => {
    const exchange = await call(send, "tools/call", { name: "echo", arguments: { text } });
    expect(exchange.status).toBe(200);
    expect(exchange.result.content).toEqual([{ type: "text", text }]);
    return exchange;
  };
  /** True once every backend hears a change made on another: its bus connection is back. */
  const everyBackendHears = async () => {
    const streams = await Promise.all(
      cluster.backends.map((backend) => listen(backend.url, `probe-${backend.index}`)),
    );
    try {
      return await eventually(async () => {
        await call(bounded(cluster.backends[0]!.url), "tools/call", {
          name: "notify_tools_changed",
          arguments: {},
        });
        const heard = await Promise.all(streams.map(({ reader }) => reader.next(1_000)));
        return heard.every((message) => message?.method === "notifications/tools/list_changed");
      });
    } finally {
      await Promise.all(streams.map(({ reader }) => reader.cancel()));
    }
  };

  beforeAll(async () => {
    cluster = await startCluster({ processes: 3 });
    proxy = bounded(cluster.url);
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  // Whatever a test left broken, the next one starts from a whole cluster.
  afterEach(async () => {
    for (const backend of cluster.backends) if (!backend.alive) await backend.restart();
    if (redisRunning) return;
    await cluster.redis.start();
    redisRunning = true;
    for (const backend of cluster.backends) {
      const send = bounded(backend.url);
      await eventually(async () => (await legacyCall(send, "none", "ping")).status === 404);
    }
    await everyBackendHears();
  }, RECOVERY_MS * 3);

  it("should answer legacy requests 503 with Retry-After while Redis is down, serve modern ones, and recover without a restart", async () => {
    const old = await openSession(proxy);
    expect((await tool(proxy, old, "echo", { text: "before" })).result.content).toEqual([
      { type: "text", text: "before" },
    ]);
    const pids = cluster.backends.map((backend) => backend.pid);

    await cluster.redis.stop();
    redisRunning = false;

    // Modern requests need no store: every backend goes on answering them.
    const served = [];
    for (let i = 0; i < 6; i++) served.push(servedBy(await modernEcho(proxy, `down-${i}`)));
    expect(new Set(served)).toEqual(new Set([0, 1, 2]));

    // Legacy requests need the session store: each backend says so at once, in JSON-RPC.
    for (const backend of cluster.backends) {
      const send = bounded(backend.url);
      const attempts: Record<string, RawRequest> = {
        "tools/call": {
          method: "POST",
          headers: legacyHeaders(old),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "echo", arguments: { text: "during" } },
          }),
        },
        initialize: {
          method: "POST",
          headers: legacyHeaders(),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "failures", version: "0.0.0" },
            },
          }),
        },
        GET: { method: "GET", headers: { ...legacyHeaders(old), accept: "text/event-stream" } },
        DELETE: { method: "DELETE", headers: legacyHeaders(old) },
      };
      for (const [name, request] of Object.entries(attempts)) {
        const started = Date.now();
        const response = await send(request);
        const what = `${name} on backend ${backend.index}`;
        expect(response.status, what).toBe(503);
        expect(Number(response.headers.get("retry-after")), what).toBeGreaterThan(0);
        const body = JSON.parse(response.text);
        assertSchema("legacy", "JSONRPCErrorResponse", body);
        expect(body, what).toMatchObject({
          jsonrpc: "2.0",
          error: { code: -32603, message: expect.any(String) },
        });
        expect(Date.now() - started, what).toBeLessThan(REQUEST_MS);
      }
    }
    expect((await tool(proxy, old, "echo", { text: "via proxy" })).status).toBe(503);

    // No backend crashed: the same processes answer directly.
    for (const backend of cluster.backends) await modernEcho(bounded(backend.url), "alive");
    expect(cluster.backends.map((backend) => backend.pid)).toEqual(pids);

    await cluster.redis.start();
    redisRunning = true;

    // Redis came back empty: once each backend reconnects, the old session is unknown there.
    for (const backend of cluster.backends) {
      const send = bounded(backend.url);
      let status = 0;
      const reconnected = await eventually(async () => {
        status = (await legacyCall(send, old, "ping")).status;
        return status !== 503;
      });
      expect(reconnected, `backend ${backend.index} still answers 503`).toBe(true);
      expect(status, `old session on backend ${backend.index}`).toBe(404);
    }
    expect(await everyBackendHears()).toBe(true);

    // A new session works end to end, on every backend, with the same processes.
    const fresh = await openSession(proxy);
    for (const backend of cluster.backends) {
      const echoed = await tool(bounded(backend.url), fresh, "echo", {
        text: `after-${backend.index}`,
      });
      expect(echoed.result.content).toEqual([{ type: "text", text: `after-${backend.index}` }]);
    }
    const stream = await get(cluster.backends[0]!.url, fresh);
    expect(stream.response.status).toBe(200);
    await tool(bounded(cluster.backends[1]!.url), fresh, "notify_tools_changed");
    expect(await next(stream.reader)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
    });
    const deleted = await bounded(cluster.backends[2]!.url)({
      method: "DELETE",
      headers: legacyHeaders(fresh),
    });
    expect(deleted.status).toBe(200);
    await stream.reader.done;
    expect(cluster.backends.map((backend) => backend.pid)).toEqual(pids);
  });

  it("should fail a request whose process is killed mid-way, and go on with its session on the others", async () => {
    const session = await openSession(proxy);
    const call = await openStream(cluster.url, {
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "paced-crash",
        method: "tools/call",
        params: { name: "paced", arguments: { n: 50, ms: 100 } },
      }),
    });
    expect(call.response.status).toBe(200);
    expect(await next(call.reader, "tools/call")).toMatchObject({
      method: "notifications/message",
      params: { data: { tick: 1 } },
    });
    const victim = cluster.backends[servedBy(call.response)]!;
    await victim.kill();

    // The connection breaks: the client never gets the response.
    const ended = await Promise.race([
      call.reader.done.then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), WAIT_MS)),
    ]);
    expect(ended).toBe(true);
    const rest: Record<string, unknown>[] = [];
    for (let message = await call.reader.next(0); message; message = await call.reader.next(0))
      rest.push(message);
    expect(rest.filter((message) => "id" in message)).toEqual([]);

    // The session record lives in Redis: the survivors serve it.
    const survivors = cluster.backends.filter((backend) => backend.alive).map((b) => b.index);
    const calls = await Promise.all(
      ["a", "b", "c", "d"].map((text) => tool(proxy, session, "echo", { text })),
    );
    expect(calls.map((exchange) => exchange.result.content)).toEqual(
      ["a", "b", "c", "d"].map((text) => [{ type: "text", text }]),
    );
    expect(new Set(calls.map(servedBy))).toEqual(new Set(survivors));

    const stream = await get(cluster.url, session);
    expect(stream.response.status).toBe(200);
    const holder = servedBy(stream.response);
    expect(survivors).toContain(holder);
    const other = cluster.backends[survivors.find((index) => index !== holder)!]!;
    await tool(bounded(other.url), session, "notify_tools_changed");
    expect(await next(stream.reader)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
    });
    const deleted = await bounded(other.url)({ method: "DELETE", headers: legacyHeaders(session) });
    expect(deleted.status).toBe(200);
    await stream.reader.done;
  });

  it("should end a listen stream with its result and hand a GET stream over on SIGTERM, losing nothing", async () => {
    const [victim, publisher] = cluster.backends;
    const listening = await listen(victim!.url, "shutdown-listen");

    const session = await openSession(proxy);
    await legacyCall(proxy, session, "resources/subscribe", { uri: "test://static" });
    const first = await get(victim!.url, session);
    expect(first.response.status).toBe(200);
    await tool(bounded(publisher!.url), session, "notify_tools_changed");
    expect(await next(first.reader)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
    });
    // The modern stream heard it too: consume it, so its next message is the final one.
    expect((await listening.reader.next(WAIT_MS))?.method).toBe("notifications/tools/list_changed");
    const lastEventId = first.reader.lastEventId;
    expect(lastEventId).toBeTruthy();

    const started = Date.now();
    await victim!.terminate();
    // It exited by itself, well before the harness would SIGKILL it.
    expect(Date.now() - started).toBeLessThan(4_000);

    // spec: subscriptions/listen — a server ending a subscription answers the listen request.
    const final = await listening.reader.next(WAIT_MS);
    if (final) assertModernMessage(final, "subscriptions/listen");
    expect(final).toMatchObject({
      jsonrpc: "2.0",
      id: "shutdown-listen",
      result: { resultType: "complete", _meta: { [SUBSCRIPTION]: "shutdown-listen" } },
    });
    await listening.reader.done;
    expect(listening.reader.ended).toBe(true);
    await first.reader.done;
    expect(first.reader.ended).toBe(true);

    // Published while the client has no GET stream, by a process that never held it.
    await tool(bounded(publisher!.url), session, "notify_resource_updated", {
      uri: "test://static",
    });
    await tool(bounded(publisher!.url), session, "notify_tools_changed");

    const resumed = await get(cluster.url, session, lastEventId);
    expect(resumed.response.status).toBe(200);
    expect(servedBy(resumed.response)).not.toBe(victim!.index);
    const missed = [await next(resumed.reader)];
    if (missed[0]) missed.push(await next(resumed.reader));
    expect(missed).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "test://static" },
      },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
    // Live from here on, once.
    await tool(bounded(publisher!.url), session, "notify_tools_changed");
    expect((await next(resumed.reader))?.method).toBe("notifications/tools/list_changed");
    expect(await resumed.reader.next(300)).toBeUndefined();
    await bounded(publisher!.url)({ method: "DELETE", headers: legacyHeaders(session) });
    await resumed.reader.done;
  });
});
