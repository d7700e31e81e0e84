import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, type McpHandler, memoryStore } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { LEGACY_VERSION, legacyHeaders, openSession } from "../helpers/legacy.js";
import { modernHeaders, modernMeta, type Send, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { type Mounted, mount } from "../helpers/transports.js";

const MAX_STREAMS = 12;
const PER_CLIENT = 4;

/** An open long-lived stream, as a client holds it. */
interface Held {
  status: number;
  headers: Headers;
  reader: SseReader | undefined;
  body: string;
}

let mcp: McpHandler;
let mounted: Mounted;
beforeAll(async () => {
  // trustProxy, so each test client can be told apart by the X-Forwarded-For a proxy would set.
  mcp = createMcpHandler(createFixtureServer(), {
    secret: "s",
    maxStreams: MAX_STREAMS,
    maxStreamsPerClient: PER_CLIENT,
    trustProxy: true,
  });
  mounted = await mount("node", mcp);
});
afterAll(() => mounted.close());

function from(address: string): Send {
  const send = viaUrl(mounted.url);
  return (request) =>
    send({ ...request, headers: { ...request.headers, "x-forwarded-for": address } });
}

/** Opens a stream with fetch; its body is read live, or as text when the server refused it. */
async function open(address: string, init: RequestInit): Promise<Held> {
  const response = await fetch(mounted.url, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), "x-forwarded-for": address },
  });
  if (response.status !== 200)
    return {
      status: response.status,
      headers: response.headers,
      reader: undefined,
      body: await response.text(),
    };
  return {
    status: 200,
    headers: response.headers,
    reader: new SseReader(response.body!),
    body: "",
  };
}

let nextId = 1;
function listen(address: string): Promise<Held> {
  return open(address, {
    method: "POST",
    headers: modernHeaders("subscriptions/listen"),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
    }),
  });
}

async function getStream(address: string): Promise<Held> {
  const sessionId = await openSession(from(address));
  const held = await open(address, {
    method: "GET",
    headers: { ...legacyHeaders(sessionId), accept: "text/event-stream" },
  });
  return held;
}

/** Reads the first event of a granted stream, so the server surely counts it as open. */
async function opened(held: Held, era: "modern" | "legacy"): Promise<void> {
  expect(held.status, held.body).toBe(200);
  if (era === "modern") {
    const ack = await held.reader!.next();
    assertModernMessage(ack, "notifications/subscriptions/acknowledged");
  } else {
    // 2025-11-25 primes the GET stream with an empty event that carries an id.
    await expect.poll(() => held.reader!.lastEventId).toBeDefined();
  }
}

/** Resumes a legacy GET stream and expects the one list change it missed, replayed first. */
async function expectMissedChange(address: string, sessionId: string, lastEventId: string) {
  const resumed = await open(address, {
    method: "GET",
    headers: {
      ...legacyHeaders(sessionId, LEGACY_VERSION),
      accept: "text/event-stream",
      "last-event-id": lastEventId,
    },
  });
  expect(resumed.status).toBe(200);
  const missed = await resumed.reader!.next();
  assertLegacyMessage(missed, "notifications/tools/list_changed");
  expect(missed).toMatchObject({ method: "notifications/tools/list_changed" });
  await resumed.reader!.cancel();
}

function expectRefused(held: Held, status: 429 | 503) {
  expect(held.status).toBe(status);
  expect(held.headers.get("retry-after")).toBe("5");
  const body = JSON.parse(held.body);
  expect(body).toMatchObject({ jsonrpc: "2.0", error: { code: -32603 } });
  if (status === 429) expect(body.error.message).toMatch(/for this client/);
}

describe("stream slots", () => {
  it.each([
    ["listen streams", "modern", listen],
    ["legacy GET streams", "legacy", getStream],
  ] as const)(
    "should give a slot back when the client closes one of its %s, 3 x maxStreams times over",
    async (_kind, era, openOne) => {
      for (let i = 0; i < 3 * MAX_STREAMS; i++) {
        const held = await openOne("10.0.0.1");
        await opened(held, era);
        await held.reader!.cancel();
        await expect.poll(() => mcp.stats().streams).toBe(0);
      }
      // Neither that client nor another one is locked out.
      for (const address of ["10.0.0.1", "10.0.0.2"]) {
        const held = await openOne(address);
        await opened(held, era);
        await held.reader!.cancel();
      }
      await expect.poll(() => mcp.stats().streams).toBe(0);
      // GET streams left by their clients wait for a resumption, but never more than maxStreams.
      expect(mcp.stats().sessionsHeld).toBeLessThanOrEqual(MAX_STREAMS);
    },
  );

  it("should cap each client's open streams, answering 429, without stopping another client", async () => {
    const held: Held[] = [];
    for (let i = 0; i < PER_CLIENT; i++) {
      const stream = i % 2 === 0 ? await listen("10.0.0.3") : await getStream("10.0.0.3");
      await opened(stream, i % 2 === 0 ? "modern" : "legacy");
      held.push(stream);
    }
    expectRefused(await listen("10.0.0.3"), 429);
    expectRefused(await getStream("10.0.0.3"), 429);
    const other = await listen("10.0.0.4");
    await opened(other, "modern");
    held.push(other);
    // Closing one stream gives that client room again.
    await held.shift()!.reader!.cancel();
    await expect.poll(() => mcp.stats().streams).toBe(PER_CLIENT);
    const again = await listen("10.0.0.3");
    await opened(again, "modern");
    held.push(again);
    await Promise.all(held.map((stream) => stream.reader!.cancel()));
    await expect.poll(() => mcp.stats().streams).toBe(0);
  });

  it("should count anonymous IPv6 clients by their /64, and an IPv4-mapped address as its IPv4 one", async () => {
    const held: Held[] = [];
    for (let i = 1; i <= PER_CLIENT; i++) {
      const stream = await listen(`2001:db8:7:7:${i}::${i}`);
      await opened(stream, "modern");
      held.push(stream);
    }
    expectRefused(await listen("2001:db8:7:7:ffff:ffff:ffff:ffff"), 429);
    const otherSubnet = await listen("2001:db8:7:8::1");
    await opened(otherSubnet, "modern");
    held.push(otherSubnet);
    await Promise.all(held.splice(0).map((stream) => stream.reader!.cancel()));
    await expect.poll(() => mcp.stats().streams).toBe(0);
    for (let i = 0; i < PER_CLIENT; i++) {
      const stream = await listen(i % 2 === 0 ? "10.0.6.1" : "::ffff:10.0.6.1");
      await opened(stream, "modern");
      held.push(stream);
    }
    expectRefused(await listen("::FFFF:10.0.6.1"), 429);
    await Promise.all(held.map((stream) => stream.reader!.cancel()));
    await expect.poll(() => mcp.stats().streams).toBe(0);
  });

  it("should answer 503 once the process is full, whoever asks", async () => {
    const held: Held[] = [];
    for (let i = 0; i < MAX_STREAMS; i++) {
      const stream = await listen(`10.0.1.${Math.floor(i / PER_CLIENT)}`);
      await opened(stream, "modern");
      held.push(stream);
    }
    expectRefused(await listen("10.0.2.1"), 503);
    await held.pop()!.reader!.cancel();
    await expect.poll(() => mcp.stats().streams).toBe(MAX_STREAMS - 1);
    const fresh = await listen("10.0.2.1");
    await opened(fresh, "modern");
    held.push(fresh);
    await Promise.all(held.map((stream) => stream.reader!.cancel()));
    await expect.poll(() => mcp.stats().streams).toBe(0);
  });

  it("should not let one client's abandoned GET streams push out another's awaiting a resumption", async () => {
    const sessionId = await openSession(from("10.0.4.1"));
    const theirs = await open("10.0.4.1", {
      method: "GET",
      headers: { ...legacyHeaders(sessionId, LEGACY_VERSION), accept: "text/event-stream" },
    });
    await opened(theirs, "legacy");
    const lastEventId = theirs.reader!.lastEventId!;
    await theirs.reader!.cancel();
    // Another client opens and abandons twice as many GET streams as the process holds.
    for (let i = 0; i < 2 * MAX_STREAMS; i++) {
      const held = await getStream("10.0.4.2");
      await opened(held, "legacy");
      await held.reader!.cancel();
    }
    await expect.poll(() => mcp.stats().streams).toBe(0);
    mcp.server.notifyToolsListChanged();
    await expectMissedChange("10.0.4.1", sessionId, lastEventId);
  });

  it("should keep a legacy GET stream's events for a resumption after its client left", async () => {
    const send = from("10.0.3.1");
    const sessionId = await openSession(send);
    const first = await open("10.0.3.1", {
      method: "GET",
      headers: { ...legacyHeaders(sessionId, LEGACY_VERSION), accept: "text/event-stream" },
    });
    await opened(first, "legacy");
    const lastEventId = first.reader!.lastEventId!;
    await first.reader!.cancel();
    await expect.poll(() => mcp.stats().streams).toBe(0);
    mcp.server.notifyToolsListChanged();
    await expectMissedChange("10.0.3.1", sessionId, lastEventId);
  });
});

describe("stream slots when the client leaves early, or cannot be told apart", () => {
  it("should give the slot back when the client left before its GET stream was answered", async () => {
    // Two handlers on one store behave as two processes. The first keeps listening on the
    // session (a call waits for an elicitation there), so a takeover on the second waits for it.
    const store = memoryStore();
    const shared = { ...store, close: async () => {} };
    const first = createMcpHandler(createFixtureServer(), { secret: "s", store: shared });
    const second = createMcpHandler(createFixtureServer(), { secret: "s", store: shared });
    const a = await mount("node", first);
    const b = await mount("node", second);
    try {
      const session = await openSession(viaUrl(a.url), { elicitation: {} });
      const pending = await fetch(a.url, {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "confirm", arguments: { item: "x" } },
        }),
      });
      const asking = new SseReader(pending.body!);
      await expect.poll(async () => (await asking.next(100))?.method).toBe("elicitation/create");
      const leaving = new AbortController();
      const gone = fetch(b.url, {
        headers: {
          ...legacyHeaders(session),
          accept: "text/event-stream",
          "last-event-id": "gfeedfacefeedface.3",
        },
        signal: leaving.signal,
      }).catch(() => undefined);
      await expect.poll(() => second.stats().streams).toBe(1);
      leaving.abort();
      await gone;
      await expect.poll(() => second.stats().streams, { timeout: 5_000 }).toBe(0);
      await asking.cancel();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("should hold anonymous clients with no known address to the process cap only", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      maxStreams: MAX_STREAMS,
      maxStreamsPerClient: 1,
    });
    const open: SseReader[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const response = await mcp.fetch(
          new Request("http://127.0.0.1/mcp", {
            method: "POST",
            headers: modernHeaders("subscriptions/listen"),
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: i,
              method: "subscriptions/listen",
              params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
            }),
          }),
        );
        expect(response.status).toBe(200);
        open.push(new SseReader(response.body!));
      }
      expect(mcp.stats().streams).toBe(3);
    } finally {
      await Promise.all(open.map((reader) => reader.cancel()));
      await mcp.close();
    }
  });
});
