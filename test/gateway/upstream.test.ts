import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { McpClient } from "../../src/client/index.js";
import type { Upstream, UpstreamKey } from "../../src/gateway/types.js";
import {
  isRetryable,
  type StdioUpstreamOptions,
  stdioUpstream,
  type UpstreamRestart,
} from "../../src/gateway/upstream/index.js";
import { GATEWAY_UPSTREAM_SCRIPT } from "../helpers/gateway-upstream-server.js";

const ROOT = resolve(import.meta.dirname, "../..");

// The upstream test server as a real child process, supervised by stdioUpstream.

const open: Upstream[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((upstream) => upstream.close(0)));
});

function upstreamOf(options: Partial<StdioUpstreamOptions> = {}): Upstream {
  const upstream = stdioUpstream({
    command: process.execPath,
    args: ["--import", "tsx", GATEWAY_UPSTREAM_SCRIPT],
    cwd: ROOT,
    onStderr: () => {},
    onRestart: () => {},
    closeTimeoutMs: 1_000,
    ...options,
  });
  open.push(upstream);
  return upstream;
}

/** Calls a tool on a leased connection, releasing it after. */
async function call(
  upstream: Upstream,
  name: string,
  args: Record<string, unknown> = {},
  key: UpstreamKey = {},
) {
  const lease = await upstream.acquire(key);
  try {
    return (await lease.client.callTool(name, args)).structuredContent as Record<string, unknown>;
  } finally {
    lease.release();
  }
}

const pidOf = async (upstream: Upstream, key: UpstreamKey = {}) =>
  Number((await call(upstream, "pid", {}, key)).pid);

describe("stdioUpstream", () => {
  it("should serve calls through a lease on one child, and tell onConnect of it", async () => {
    const connected: McpClient[] = [];
    const upstream = upstreamOf();
    upstream.onConnect((client) => connected.push(client));
    const lease = await upstream.acquire({});
    expect((await lease.client.callTool("echo", { text: "hi" })).content).toEqual([
      { type: "text", text: "hi" },
    ]);
    lease.release();
    expect(connected).toEqual([lease.client]);
    expect(await pidOf(upstream)).toBe(await pidOf(upstream));
  });

  it("should fail a call in flight retryable when the child dies, restart it and serve the next call", async () => {
    const restarts: UpstreamRestart[] = [];
    const connected: McpClient[] = [];
    const upstream = upstreamOf({
      restart: { initialMs: 10 },
      onRestart: (event) => restarts.push(event),
    });
    upstream.onConnect((client) => connected.push(client));
    const firstPid = await pidOf(upstream);
    const slow = call(upstream, "slow", { ms: 60_000 });
    const crash = call(upstream, "crash");
    // The slow call was in flight on the child: it fails at once, not after its minute.
    for (const failed of [slow, crash]) {
      const error = await failed.catch((caught: unknown) => caught);
      expect(isRetryable(error)).toBe(true);
      expect(error).toMatchObject({ code: -32603, message: expect.stringContaining("exited") });
    }
    await expect.poll(() => restarts.length).toBe(1);
    expect(restarts[0]).toMatchObject({ attempt: 1, delayMs: 10 });
    const secondPid = await pidOf(upstream);
    expect(secondPid).not.toBe(firstPid);
    expect(connected).toHaveLength(2);
  });

  it("should wait longer before each restart while the child keeps dying", async () => {
    const restarts: UpstreamRestart[] = [];
    const upstream = upstreamOf({
      restart: { initialMs: 20, maxMs: 60 },
      onRestart: (event) => restarts.push(event),
    });
    for (let crashes = 1; crashes <= 4; crashes++) {
      await expect(call(upstream, "crash")).rejects.toMatchObject({ code: -32603 });
      await expect.poll(() => restarts.length).toBe(crashes);
    }
    expect(restarts.map((event) => event.delayMs)).toEqual([20, 40, 60, 60]);
    expect(restarts.map((event) => event.attempt)).toEqual([1, 2, 3, 4]);
    expect(await pidOf(upstream)).toBeGreaterThan(0);
  });

  it("should refuse at once, retryable, while the restart is further off than restartWaitMs", async () => {
    const upstream = upstreamOf({
      restart: { initialMs: 60_000, maxMs: 60_000 },
      restartWaitMs: 20_000,
    });
    await expect(call(upstream, "crash")).rejects.toMatchObject({ code: -32603 });
    const error = await upstream.acquire({}).catch((caught: unknown) => caught);
    expect(isRetryable(error)).toBe(true);
    expect(error).toMatchObject({
      message: expect.stringMatching(/exited \(code 1\); it restarts in 60 s$/),
    });
  });

  it("should run at most maxConcurrency calls at once in the child, the rest waiting in line", async () => {
    const upstream = upstreamOf({ maxConcurrency: 2 });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => call(upstream, "slow", { ms: 50 })),
    );
    expect(results.every((result) => result.finished === true)).toBe(true);
    expect((await call(upstream, "stats")).maxActive).toBe(2);
  });

  it("should give up waiting for a slot when the caller's signal aborts", async () => {
    const upstream = upstreamOf({ maxConcurrency: 1 });
    const held = await upstream.acquire({});
    const controller = new AbortController();
    const waiting = upstream.acquire({}, controller.signal);
    controller.abort(new Error("the client went away"));
    await expect(waiting).rejects.toThrow("the client went away");
    held.release();
    // The aborted caller left the line: the slot goes to the next one.
    expect(await pidOf(upstream)).toBeGreaterThan(0);
  });

  it("should give each session its own child, the same child to the same session", async () => {
    const connected: UpstreamKey[] = [];
    const upstream = upstreamOf({ scope: "session" });
    upstream.onConnect((_client, key) => connected.push(key));
    const a = await pidOf(upstream, { sessionId: "a" });
    const b = await pidOf(upstream, { sessionId: "b" });
    expect(a).not.toBe(b);
    expect(await pidOf(upstream, { sessionId: "a" })).toBe(a);
    // Without a session, a request uses the process's own child.
    const processPid = await pidOf(upstream, {});
    expect([a, b]).not.toContain(processPid);
    expect(connected).toEqual([{ sessionId: "a" }, { sessionId: "b" }, {}]);
  });

  it("should give each principal its own child, closing the least recently used past maxUpstreams", async () => {
    const upstream = upstreamOf({ scope: "principal", maxUpstreams: 2 });
    const alice = await pidOf(upstream, { principal: "alice" });
    const bob = await pidOf(upstream, { principal: "bob" });
    expect(await pidOf(upstream, { principal: "alice" })).toBe(alice);
    // A third principal takes bob's place (alice was used last), so bob gets a new child.
    const carol = await pidOf(upstream, { principal: "carol" });
    expect(new Set([alice, bob, carol]).size).toBe(3);
    expect(await pidOf(upstream, { principal: "alice" })).toBe(alice);
    const bobAgain = await pidOf(upstream, { principal: "bob" });
    expect(bobAgain).not.toBe(bob);
    await expect.poll(() => isAlive(bob)).toBe(false);
  });

  it("should close a scoped child after idleMs without requests", async () => {
    const upstream = upstreamOf({ scope: "session", idleMs: 50 });
    const pid = await pidOf(upstream, { sessionId: "a" });
    await expect.poll(() => isAlive(pid)).toBe(false);
    expect(await pidOf(upstream, { sessionId: "a" })).not.toBe(pid);
  });

  it("should let a call finish within close's grace, then end the child and refuse new calls", async () => {
    const upstream = upstreamOf();
    const pid = await pidOf(upstream);
    const slow = call(upstream, "slow", { ms: 200 });
    await expect.poll(async () => (await call(upstream, "stats")).active).toBe(1);
    const closed = upstream.close(30_000);
    const refused = await upstream.acquire({}).catch((caught: unknown) => caught);
    expect(isRetryable(refused)).toBe(true);
    expect(await slow).toMatchObject({ finished: true });
    await closed;
    expect(isAlive(pid)).toBe(false);
  });

  it("should fail a call still running when close's grace runs out, and kill the child", async () => {
    const upstream = upstreamOf();
    const pid = await pidOf(upstream);
    const slow = call(upstream, "slow", { ms: 60_000 }).catch((caught: unknown) => caught);
    await expect.poll(async () => (await call(upstream, "stats")).active).toBe(1);
    await upstream.close(50);
    const error = await slow;
    expect(isRetryable(error)).toBe(true);
    expect(isAlive(pid)).toBe(false);
  });

  it("should hand the child's stderr to onStderr line by line", async () => {
    const lines: string[] = [];
    const upstream = upstreamOf({
      onStderr: (line) => lines.push(line),
      env: { GATEWAY_UPSTREAM_BANNER: "starting up" },
    });
    await call(upstream, "stderr", { text: "first\nsecond" });
    await expect.poll(() => lines).toEqual(["starting up", "first", "second"]);
  });

  it("should stop a child that never answers after startTimeoutMs, and start it again", async () => {
    const restarts: UpstreamRestart[] = [];
    const upstream = upstreamOf({
      args: ["-e", "setInterval(() => {}, 1000)"],
      startTimeoutMs: 300,
      closeTimeoutMs: 100,
      onRestart: (event) => restarts.push(event),
    });
    const error = await upstream.acquire({}).catch((caught: unknown) => caught);
    expect(isRetryable(error)).toBe(true);
    expect(error).toMatchObject({ message: expect.stringMatching(/within 300 ms/) });
    // Once the child is stopped: stdin ended, then SIGTERM.
    await expect.poll(() => restarts.length, { timeout: 10_000 }).toBe(1);
    expect(restarts[0]?.error.message).toMatch(/could not start: no answer within 300 ms$/);
  });

  it("should reject retryable when the command cannot start, and retry it with backoff", async () => {
    const restarts: UpstreamRestart[] = [];
    const upstream = upstreamOf({
      command: "/nonexistent/mcp-server",
      restart: { initialMs: 10 },
      onRestart: (event) => restarts.push(event),
    });
    const error = await upstream.acquire({}).catch((caught: unknown) => caught);
    expect(isRetryable(error)).toBe(true);
    expect(error).toMatchObject({
      message: expect.stringMatching(/could not start: could not be run: spawn .*ENOENT$/),
    });
    await expect.poll(() => restarts.length).toBeGreaterThanOrEqual(2);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
