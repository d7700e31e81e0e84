import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { openStream } from "../helpers/cluster.js";
import { legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { call, type Send, viaUrl } from "../helpers/modern.js";
import { type Mounted, mount } from "../helpers/transports.js";

let mounted: Mounted;
beforeAll(async () => {
  // trustProxy, so each test client is told apart by the X-Forwarded-For a proxy would set.
  const mcp = createMcpHandler(createFixtureServer(), {
    secret: "s",
    trustProxy: true,
    legacy: { maxSessions: 10, maxSessionsPerClient: 3 },
  });
  mounted = await mount("node", mcp);
});
afterAll(() => mounted.close());

function from(address: string): Send {
  const send = viaUrl(mounted.url);
  return (request) =>
    send({ ...request, headers: { ...request.headers, "x-forwarded-for": address } });
}

async function alive(send: Send, session: string): Promise<boolean> {
  const { status } = await legacyCall(send, session, "ping");
  return status === 200;
}

describe("legacy sessions per client", () => {
  it("should end a client's own least recently used sessions beyond its cap, never another client's", async () => {
    const other = from("10.1.0.1");
    const theirs = await openSession(other);
    const flooder = from("10.1.0.2");
    const mine = [await openSession(flooder), await openSession(flooder)];
    // The oldest is used now: the second becomes the least recently used.
    expect(await alive(flooder, mine[0]!)).toBe(true);
    mine.push(await openSession(flooder));
    // Twice the process's maxSessions: without the per-client cap the store would evict theirs.
    for (let i = 0; i < 20; i++) {
      mine.push(await openSession(flooder));
      expect(await alive(flooder, mine[0]!), `after session ${i}`).toBe(true);
    }
    expect(await alive(other, theirs)).toBe(true);
    const kept = await Promise.all(mine.map((session) => alive(flooder, session)));
    // The one in use and the newest two live; the others answer 404 (they re-initialize).
    expect(kept).toEqual([true, ...Array(20).fill(false), true, true]);
  });

  it("should never end an active session, and refuse a new one when all are active", async () => {
    const client = from("10.1.0.3");
    const sessions = [await openSession(client), await openSession(client, { elicitation: {} })];
    sessions.push(await openSession(client));
    // The oldest two are active: a GET stream open on the first, a request running on the second.
    const listen = (session: string) =>
      openStream(mounted.url, {
        method: "GET",
        headers: {
          ...legacyHeaders(session),
          accept: "text/event-stream",
          "x-forwarded-for": "10.1.0.3",
        },
      });
    const stream = await listen(sessions[0]!);
    expect(stream.response.status).toBe(200);
    const running = openStream(mounted.url, {
      method: "POST",
      headers: { ...legacyHeaders(sessions[1]), "x-forwarded-for": "10.1.0.3" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "ask",
        method: "tools/call",
        params: { name: "confirm", arguments: { item: "x" } },
      }),
    });
    const { reader } = await running;
    const asked = await reader.next(5_000);
    expect(asked).toMatchObject({ method: "elicitation/create" });
    // The idle third goes for the fourth, newer but active too (a GET stream); then nothing
    // idle is left to end.
    sessions.push(await openSession(client));
    expect(await alive(client, sessions[2]!)).toBe(false);
    const another = await listen(sessions[3]!);
    expect(another.response.status).toBe(200);
    sessions.push(await openSession(client).catch(String));
    expect(sessions[4]).toMatch(/initialize failed: 429 .*Too many sessions for this client/);
    for (const session of [sessions[0], sessions[1], sessions[3]])
      expect(await alive(client, session!)).toBe(true);
    await stream.reader.cancel();
    await another.reader.cancel();
    const answered = await client({
      method: "POST",
      headers: legacyHeaders(sessions[1]),
      body: JSON.stringify({ jsonrpc: "2.0", id: asked?.id, result: { action: "decline" } }),
    });
    expect(answered.status).toBe(202);
    expect(await reader.next(5_000)).toMatchObject({ id: "ask", result: {} });
  });
});

describe("unfinished tasks per anonymous client", () => {
  it("should cap each anonymous client's tasks on its own, not all anonymous callers together", async () => {
    const server = new McpServer({ name: "tasks", version: "1.0.0" });
    server.tool({ name: "hang", taskSupport: "optional" }, (_args, ctx) => {
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
      );
    });
    const tasks = await mount(
      "node",
      createMcpHandler(server, {
        secret: "s",
        trustProxy: true,
        tasks: { maxActivePerPrincipal: 2 },
      }),
    );
    try {
      const start = (address: string) =>
        call(
          viaUrl(tasks.url),
          "tools/call",
          { name: "hang", arguments: {} },
          {
            capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
            headers: { "x-forwarded-for": address },
          },
        );
      expect((await start("10.2.0.1")).result.resultType).toBe("task");
      expect((await start("10.2.0.1")).result.resultType).toBe("task");
      const refused = await start("10.2.0.1");
      expect(refused.error?.message).toMatch(/Too many unfinished tasks/);
      // Another anonymous client still has its whole budget.
      expect((await start("10.2.0.2")).result.resultType).toBe("task");
    } finally {
      await tasks.close();
    }
  });
});
