// Rate limits (`rateLimit`): a budget of points per window per principal, in the memory store.
import { afterEach, describe, expect, it } from "vitest";
import { bearerAuth } from "../../src/auth/index.js";
import {
  createMcpHandler,
  type McpHandlerOptions,
  McpServer,
  memoryStore,
} from "../../src/index.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type RawRequest, type Send, withBearer } from "../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../helpers/spec.js";
import { mount, TRANSPORTS } from "../helpers/transports.js";

const auth = bearerAuth({
  authorizationServers: ["https://auth.example.com"],
  verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
});

function createServer(): McpServer {
  const server = new McpServer({ name: "limited", version: "1.0.0" });
  server.tool({ name: "cheap" }, () => "cheap");
  server.tool({ name: "expensive" }, () => "expensive");
  // Work whose cost shows as it runs: it says so first (which opens a legacy stream), then pays.
  server.tool(
    { name: "metered", input: { type: "object", properties: { points: { type: "integer" } } } },
    async ({ points }, ctx) => {
      await ctx.log("info", "metering");
      await ctx.charge(Number(points));
      return `charged ${points}`;
    },
  );
  server.prompt({ name: "greet" }, () => "Hello");
  server.resource({ uri: "notes://index", name: "index" }, () => "index");
  server.resourceTemplate({ uriTemplate: "notes://{id}", name: "note" }, (uri) => ({
    uri,
    text: "a note",
  }));
  return server;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function handler(options: McpHandlerOptions) {
  const mcp = createMcpHandler(createServer(), options);
  closers.push(() => mcp.close());
  return mcp;
}

/** A `Send` through the fetch handler from a client at `address`. */
function from(
  mcp: ReturnType<typeof handler>,
  address: string,
  url = "http://127.0.0.1/mcp",
): Send {
  return async (request: RawRequest) => {
    const response = await mcp.fetch(new Request(url, request), { remoteAddress: address });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

/** The draft's fields, as the test expects them: `"default";r=<left>;t=<seconds>`. */
function budgetOf(headers: Headers): { left: number; seconds: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(headers.get("ratelimit") ?? "");
  if (!match) throw new Error(`Malformed RateLimit: ${headers.get("ratelimit")}`);
  return { left: Number(match[1]), seconds: Number(match[2]) };
}

/** A 429 as the spec and the draft have it: headers, and a JSON-RPC error for the request. */
function expectOverBudget(
  answer: { status: number; headers: Headers; error: { code: number; data?: unknown } | undefined },
  policy: string,
): void {
  expect(answer.status).toBe(429);
  expect(answer.headers.get("ratelimit-policy")).toBe(policy);
  const { seconds } = budgetOf(answer.headers);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  // Retry-After names the window's end, never earlier (draft §6).
  expect(Number(answer.headers.get("retry-after"))).toBe(seconds);
  expect(answer.error?.code).toBe(-32005);
  expect(answer.error?.data).toEqual({ retryAfter: seconds });
}

describe.each(TRANSPORTS)("rate limits per principal through %s", (transport) => {
  it("should answer 429 to a modern principal over its budget while another is served", async () => {
    const mcp = createMcpHandler(createServer(), { auth, rateLimit: { points: 3 } });
    const mounted = await mount(transport, mcp);
    closers.push(() => mounted.close());
    const alice = withBearer(mounted.send, "alice");
    const bob = withBearer(mounted.send, "bob");
    const lefts: number[] = [];
    for (let n = 0; n < 3; n++) {
      const answer = await call(alice, "tools/call", { name: "cheap", arguments: {} });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("ratelimit-policy")).toBe('"default";q=3;w=60');
      lefts.push(budgetOf(answer.headers).left);
    }
    expect(lefts).toEqual([2, 1, 0]);
    const refused = await call(alice, "tools/call", { name: "cheap", arguments: {} });
    expectOverBudget(refused, '"default";q=3;w=60');
    expect(budgetOf(refused.headers).left).toBe(0);
    // Another principal has its own budget.
    const served = await call(bob, "tools/call", { name: "cheap", arguments: {} });
    expect(served.status).toBe(200);
    expect(served.result.content).toEqual([{ type: "text", text: "cheap" }]);
    expect(budgetOf(served.headers).left).toBe(2);
  });

  it("should answer 429 to a legacy principal over its budget while another is served", async () => {
    const mcp = createMcpHandler(createServer(), { auth, rateLimit: { points: 3 } });
    const mounted = await mount(transport, mcp);
    closers.push(() => mounted.close());
    const alice = withBearer(mounted.send, "alice");
    const bob = withBearer(mounted.send, "bob");
    // initialize costs a point; notifications/initialized is free.
    const session = await openSession(alice);
    const first = await legacyCall(alice, session, "tools/call", { name: "cheap", arguments: {} });
    expect(first.status).toBe(200);
    expect(budgetOf(first.headers).left).toBe(1);
    expect((await legacyCall(alice, session, "tools/list")).status).toBe(200);
    const refused = await legacyCall(alice, session, "tools/call", { name: "cheap" });
    expectOverBudget(refused, '"default";q=3;w=60');
    expect(refused.response.id).toBeDefined();
    const other = await openSession(bob);
    const served = await legacyCall(bob, other, "tools/call", { name: "cheap", arguments: {} });
    expect(served.status).toBe(200);
    expect(served.result.content).toEqual([{ type: "text", text: "cheap" }]);
  });
});

describe("rate limits", () => {
  it("should charge anonymous callers by their address, forwarded ones by the trusted proxy's", async () => {
    const direct = handler({ rateLimit: { points: 1 } });
    const one = from(direct, "10.0.0.1");
    expect((await call(one, "tools/list")).status).toBe(200);
    expectOverBudget(await call(one, "tools/list"), '"default";q=1;w=60');
    expect((await call(from(direct, "10.0.0.2"), "tools/list")).status).toBe(200);
    // Without trustProxy a client's own X-Forwarded-For names nobody: still 10.0.0.1's budget.
    const spoofed = from(direct, "10.0.0.1");
    const spoofing: Send = (request) =>
      spoofed({ ...request, headers: { ...request.headers, "x-forwarded-for": "198.51.100.7" } });
    expect((await call(spoofing, "tools/list")).status).toBe(429);

    const proxied = handler({ rateLimit: { points: 1 }, trustProxy: true });
    const via = (client: string): Send => {
      const send = from(proxied, "10.0.0.9");
      return (request) =>
        send({ ...request, headers: { ...request.headers, "x-forwarded-for": client } });
    };
    expect((await call(via("203.0.113.1"), "tools/list")).status).toBe(200);
    expect((await call(via("203.0.113.1"), "tools/list")).status).toBe(429);
    // Same proxy, another client behind it: its own budget.
    expect((await call(via("203.0.113.2"), "tools/list")).status).toBe(200);
  });

  it("should charge anonymous IPv6 callers by their /64 and an IPv4-mapped one as its IPv4 address, over a socket", async () => {
    const mounted = await mount("node", handler({ rateLimit: { points: 1 }, trustProxy: true }));
    closers.push(() => mounted.close());
    const via = (client: string): Send => {
      return (request) =>
        mounted.send({ ...request, headers: { ...request.headers, "x-forwarded-for": client } });
    };
    expect((await call(via("2001:db8:1:2::1"), "tools/list")).status).toBe(200);
    // Another address of the same /64: one subscriber, one budget.
    expectOverBudget(await call(via("2001:db8:1:2:ffff::9"), "tools/list"), '"default";q=1;w=60');
    expect((await call(via("2001:db8:1:3::1"), "tools/list")).status).toBe(200);
    expect((await call(via("198.51.100.4"), "tools/list")).status).toBe(200);
    expectOverBudget(await call(via("::ffff:198.51.100.4"), "tools/list"), '"default";q=1;w=60');
  });

  it("should key IPv6 callers by the ipv6Subnet given, and refuse a prefix length that is none", async () => {
    const mounted = await mount(
      "node",
      handler({ rateLimit: { points: 1 }, trustProxy: true, ipv6Subnet: 128 }),
    );
    closers.push(() => mounted.close());
    const via = (client: string): Send => {
      return (request) =>
        mounted.send({ ...request, headers: { ...request.headers, "x-forwarded-for": client } });
    };
    expect((await call(via("2001:db8:1:2::1"), "tools/list")).status).toBe(200);
    expect((await call(via("2001:db8:1:2::2"), "tools/list")).status).toBe(200);
    // The same address written another way is the same caller.
    expect((await call(via("2001:DB8:1:2:0:0:0:2"), "tools/list")).status).toBe(429);
    for (const ipv6Subnet of [0, 129, 64.5])
      expect(() => createMcpHandler(createServer(), { ipv6Subnet })).toThrow(/ipv6Subnet/);
  });

  it("should charge each tool, prompt and resource its cost", async () => {
    const mcp = handler({
      rateLimit: {
        points: 10,
        cost: {
          tools: { expensive: 6 },
          prompts: { greet: 2 },
          resources: { "notes://index": 0, "notes://{id}": 3 },
          methods: { "tools/list": 0 },
        },
      },
    });
    const send = from(mcp, "10.0.0.1");
    const spent = async (method: string, params: Record<string, unknown> = {}) => {
      const answer = await call(send, method, params);
      expect(answer.status).toBe(200);
      return answer.headers.get("ratelimit") === null ? "free" : budgetOf(answer.headers).left;
    };
    expect(await spent("tools/list")).toBe("free");
    expect(await spent("resources/read", { uri: "notes://index" })).toBe("free");
    expect(await spent("prompts/get", { name: "greet" })).toBe(8);
    expect(await spent("resources/read", { uri: "notes://42" })).toBe(5);
    // 5 left: the expensive call (6) is refused and costs nothing, so a cheap one still fits.
    const refused = await call(send, "tools/call", { name: "expensive", arguments: {} });
    expectOverBudget(refused, '"default";q=10;w=60');
    expect(budgetOf(refused.headers).left).toBe(5);
    expect(await spent("tools/call", { name: "cheap", arguments: {} })).toBe(4);
  });

  it("should price requests with a cost function", async () => {
    const seen: unknown[] = [];
    const mcp = handler({
      rateLimit: {
        points: 5,
        cost: (request) => {
          seen.push({ method: request.method, name: request.name });
          return request.name === "expensive" ? 5 : 1;
        },
      },
    });
    const send = from(mcp, "10.0.0.1");
    const answer = await call(send, "tools/call", { name: "expensive", arguments: {} });
    expect(budgetOf(answer.headers).left).toBe(0);
    expect((await call(send, "tools/list")).status).toBe(429);
    expect(seen).toEqual([
      { method: "tools/call", name: "expensive" },
      { method: "tools/list", name: undefined },
    ]);
  });

  it("should let notifications through free", async () => {
    const mcp = handler({ rateLimit: { points: 1 } });
    const send = from(mcp, "10.0.0.1");
    const session = await openSession(send); // initialize spends the only point
    for (let n = 0; n < 3; n++) {
      const response = await send({
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
          "mcp-session-id": session,
        },
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      });
      expect(response.status).toBe(202);
      expect(response.headers.get("ratelimit")).toBeNull();
    }
    const refused = await legacyCall(send, session, "ping");
    expect(refused.status).toBe(429);
    assertLegacyMessage(refused.response, "ping");
  });

  it("should answer 500 and report the cause when the limiter cannot be made", async () => {
    const errors: unknown[] = [];
    const store = memoryStore();
    const missing = new Error("rateLimit needs the optional peer dependency rate-limiter-flexible");
    const broken = { ...store, rateLimiter: () => Promise.reject(missing) };
    const mcp = handler({
      store: broken,
      rateLimit: { points: 5 },
      onError: (error) => errors.push(error),
    });
    const answer = await call(from(mcp, "10.0.0.1"), "tools/list");
    expect(answer.status).toBe(500);
    expect(answer.error?.code).toBe(-32603);
    expect(errors).toContain(missing);
  });

  it("should refuse bad configuration when the handler is created", () => {
    const server = createServer();
    const make =
      (rateLimit: McpHandlerOptions["rateLimit"], store = memoryStore()) =>
      () =>
        createMcpHandler(server, { rateLimit, store });
    expect(make({ points: 0 })).toThrow(/points/);
    expect(make({ points: 10, windowMs: 1_500 })).toThrow(/whole number of seconds/);
    expect(make({ points: 10, cost: { tools: { cheap: -1 } } })).toThrow(/cost\.tools\.cheap/);
    expect(make({ points: 10, cost: { default: 0.5 } })).toThrow(/cost\.default/);
    const { rateLimiter: _, ...withoutLimiter } = memoryStore();
    expect(make({ points: 10 }, withoutLimiter)).toThrow(/rateLimiter/);
  });

  it("should answer a legacy request charged on its open stream with the error on that stream", async () => {
    const mcp = handler({ rateLimit: { points: 5 } });
    const send = from(mcp, "10.0.0.1");
    const session = await openSession(send); // 1 point
    const refused = await legacyCall(send, session, "tools/call", {
      name: "metered",
      arguments: { points: 10 },
    });
    // The stream was open (the log went first): its status was 200; the error ends it.
    expect(refused.status).toBe(200);
    expect(refused.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(refused.messages.map((message) => message.method ?? "response")).toEqual([
      "notifications/message",
      "response",
    ]);
    expect(refused.error?.code).toBe(-32005);
    expect(refused.response.id).toBeDefined();
    // What the handler could not pay was given back: 3 points are left for this one (1 + 2).
    const paid = await legacyCall(send, session, "tools/call", {
      name: "metered",
      arguments: { points: 2 },
    });
    expect(paid.result.content).toEqual([{ type: "text", text: "charged 2" }]);
    expect((await legacyCall(send, session, "ping")).status).toBe(429);
  });

  it("should answer 429 to a modern request charged over its budget before it streams", async () => {
    const mcp = handler({ rateLimit: { points: 5 } });
    const send = from(mcp, "10.0.0.1");
    const refused = await call(send, "tools/call", { name: "metered", arguments: { points: 10 } });
    expectOverBudget(refused, '"default";q=5;w=60');
    const paid = await call(send, "tools/call", { name: "metered", arguments: { points: 3 } });
    expect(paid.result.content).toEqual([{ type: "text", text: "charged 3" }]);
    // The headers tell the budget when the request was admitted: 5 less a point per call.
    expect(budgetOf(paid.headers).left).toBe(3);
    expect((await call(send, "tools/list")).status).toBe(429);
  });

  it("should make ctx.charge a no-op without a rate limit", async () => {
    const send = from(handler({}), "10.0.0.1");
    const modern = await call(send, "tools/call", { name: "metered", arguments: { points: 1e6 } });
    expect(modern.result.content).toEqual([{ type: "text", text: "charged 1000000" }]);
    const session = await openSession(send);
    const legacy = await legacyCall(send, session, "tools/call", {
      name: "metered",
      arguments: { points: 1e6 },
    });
    expect(legacy.result.content).toEqual([{ type: "text", text: "charged 1000000" }]);
  });

  it("should validate every refusal against the schema of its era", async () => {
    const mcp = handler({ rateLimit: { points: 1 } });
    const send = from(mcp, "10.0.0.1");
    await call(send, "tools/list");
    const refused = await call(send, "tools/list", {}, { id: "the-id" });
    assertModernMessage(refused.response, "tools/list");
    expect(refused.response.id).toBe("the-id");
  });
});
