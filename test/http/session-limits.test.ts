import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
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
  it("should end a client's own oldest sessions beyond its cap, never another client's", async () => {
    const other = from("10.1.0.1");
    const theirs = await openSession(other);
    const flooder = from("10.1.0.2");
    const mine: string[] = [];
    // Twice the process's maxSessions: without the per-client cap the store would evict theirs.
    for (let i = 0; i < 20; i++) mine.push(await openSession(flooder));
    expect(await alive(other, theirs)).toBe(true);
    const kept = await Promise.all(mine.map((session) => alive(flooder, session)));
    // The newest three of the flooder's live; the older ones answer 404 (they re-initialize).
    expect(kept).toEqual([...Array(17).fill(false), true, true, true]);
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
