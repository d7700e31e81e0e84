import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import type { McpStore } from "../../src/store/types.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type Send, viaFetch } from "../helpers/modern.js";
import { startMonitor } from "../helpers/redis-monitor.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";

// What a request costs in Redis on its path, counted with MONITOR on a private redis-server
// (issue 15): a warm legacy request none, a modern retry with singleUseState exactly one (its
// requestState's nonce claimed once, across every process).

let server: RedisServer;
let redis: Redis;
let monitor: Redis;
let store: McpStore;
let mcp: McpHandler;
let send: Send;
/** Commands the handler's connections sent (not those a script ran inside Redis). */
const commands: string[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
  monitor = await startMonitor(server.url);
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    if (source !== "lua") commands.push(args.join(" "));
  });
  store = redisStore({ redis });
  mcp = createMcpHandler(createFixtureServer(), {
    secret: "test-secret",
    store,
    singleUseState: true,
  });
  await mcp.ready;
  send = viaFetch((request) => mcp.fetch(request));
});
afterAll(async () => {
  await mcp?.close();
  await store?.close();
  monitor?.disconnect();
  await redis?.quit();
  await server?.close();
});

/** Waits until MONITOR has shown everything sent before now (its output lags behind). */
async function settled(): Promise<void> {
  // Unmarks go out at the end of the event-loop turn their sessions were let go of in.
  await new Promise((resolve) => setImmediate(resolve));
  const marker = `marker-${Math.random()}`;
  await redis.echo(marker);
  await vi.waitFor(() => expect(commands.some((command) => command.includes(marker))).toBe(true));
}

/** The commands the second of two runs of `run` made Redis see (the first warms up). */
async function countCommands(run: () => Promise<void>): Promise<string[]> {
  await run();
  await settled();
  commands.length = 0;
  await run();
  await settled();
  return commands.filter((command) => !command.includes("marker-"));
}

describe("Redis commands per request (MONITOR)", () => {
  it("should send one on the request's path, the session's touch, for a warm legacy request", async () => {
    const session = await openSession(send);
    // Read once whole (its record then cached), so that the runs counted below are both warm.
    expect((await legacyCall(send, session, "ping")).status).toBe(200);
    const sent = await countCommands(async () => {
      const echo = await legacyCall(send, session, "tools/call", {
        name: "echo",
        arguments: { text: "warm" },
      });
      expect(echo.result?.content).toEqual([{ type: "text", text: "warm" }]);
    });
    // Before the answer, the session's touch: a script in its slot (it still lives, deleted
    // elsewhere: 404 at once; its idle clock restarts; this process marks it active). A client
    // told apart (an address, a principal) would add its order of use, sent at once with it (one
    // round trip); this fetch names none. After the answer, off its path, the mark goes.
    const [touch, unmark, ...rest] = sent.filter((command) => !command.includes(":lease:fleet"));
    expect(touch).toMatch(/^evalsha \w+ 2 \S*\{s:[^}]+\}:rec \S*\{s:[^}]+\}:active /i);
    expect(touch).toContain(session);
    expect(unmark).toMatch(/^srem \S*\{s:[^}]+\}:active /i);
    expect(rest).toEqual([]);
  });

  it("should send the client's order of use in the same command, for a warm legacy request from a known client", async () => {
    // A client told apart by its address (as the node adapter gives it): its sessions have an
    // order of use, a key in another slot. A standalone Redis has no slots: one script does both.
    const fromClient = viaFetch((request) => mcp.fetch(request, { remoteAddress: "192.0.2.7" }));
    const session = await openSession(fromClient);
    expect((await legacyCall(fromClient, session, "ping")).status).toBe(200);
    const sent = await countCommands(async () => {
      const echo = await legacyCall(fromClient, session, "tools/call", {
        name: "echo",
        arguments: { text: "warm" },
      });
      expect(echo.result?.content).toEqual([{ type: "text", text: "warm" }]);
    });
    const [touch, unmark, ...rest] = sent.filter((command) => !command.includes(":lease:fleet"));
    expect(touch).toMatch(
      /^evalsha \w+ 3 \S*\{s:[^}]+\}:rec \S*\{s:[^}]+\}:active \S*\{c:[^}]+\}\S* /i,
    );
    expect(touch).toContain(session);
    expect(unmark).toMatch(/^srem \S*\{s:[^}]+\}:active /i);
    expect(rest).toEqual([]);
  });

  it("should send exactly one, the nonce's claim, for a modern retry with singleUseState", async () => {
    const elicitation = { elicitation: {} };
    const ask = () =>
      call(
        send,
        "tools/call",
        { name: "confirm", arguments: { item: "a" } },
        { capabilities: elicitation },
      );
    // The first round seals its state and claims nothing; the retry claims its nonce once.
    const first = await countCommands(async () => {
      expect((await ask()).result.resultType).toBe("input_required");
    });
    let state: unknown;
    const retry = await countCommands(async () => {
      state = (await ask()).result.requestState;
      await settled();
      commands.length = 0;
      const done = await call(
        send,
        "tools/call",
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: { confirm: { action: "accept", content: { ok: true } } },
          requestState: state,
        },
        { capabilities: elicitation },
      );
      expect(done.result.structuredContent).toMatchObject({ action: "accept", rounds: 2 });
    });
    expect(first).toEqual([]);
    expect(retry).toHaveLength(1);
    expect(retry[0]).toMatch(/^set \S*nonce:state:\S+ 1 PX \d+ NX$/i);
  });
});
