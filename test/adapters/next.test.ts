import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { launchChromium } from "../helpers/browser.js";
import {
  assertCapturedMessages,
  bundleClient,
  type PageServer,
  type PageWindow,
  servePage,
} from "../helpers/browser-page.js";
import { assertEventsMessage } from "../helpers/events-schema.js";
import { openEventStream } from "../helpers/events-server.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import {
  call,
  modernHeaders,
  modernMeta,
  readExchange,
  type Send,
  viaNodeHttp,
  viaUrl,
  withBearer,
} from "../helpers/modern.js";
import { buildNextApp, type NextApp, startNextApp } from "../helpers/next-app.js";
import { freePort } from "../helpers/redis-server.js";
import { assertServerCard } from "../helpers/server-card-schema.js";
import { assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";

const APP_DIR = fileURLToPath(new URL("../../examples/nextjs/", import.meta.url));
/** The Standard Webhooks secret `app/events/hooks` verifies deliveries with. */
const WEBHOOK_SECRET = `whsec_${Buffer.from("next-events-receiver-test-secret").toString("base64")}`;
const ENV = { MCP_SECRET: "next-test-secret", WEBHOOK_SECRET };
const NOTE_SCOPES = 'scope="notes:read notes:write"';
/** A page's origin on loopback: the routes' default `allowedOrigins` admit it (the app is on loopback). */
const PAGE_ORIGIN = "http://localhost:5173";
/** Each route as [runtime, path]. */
const ROUTES: [runtime: string, path: string][] = [
  ["nodejs", "/mcp"],
  ["edge", "/edge/mcp"],
];

let app: NextApp;
let issuer: LocalIssuer;
let buildOutput = "";

// A real production build and server: what users deploy, not a mock of Next's request handling.
// The protected route trusts a local issuer and is configured with its own public URL, so the
// issuer's port and the app's are both chosen before the build.
beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: ["notes:read", "notes:write"] });
  const port = await freePort();
  const env = {
    ...ENV,
    AUTH_ISSUER: issuer.url,
    AUTH_RESOURCE: `http://127.0.0.1:${port}/auth/mcp`,
  };
  // Built without MCP_SECRET (read when the server starts, not at build time), so the build
  // shows how often the no-secret warning is printed while Next evaluates every route.
  const { MCP_SECRET: _secret, ...buildEnv } = env;
  buildOutput = (await buildNextApp(APP_DIR, buildEnv)).output;
  app = await startNextApp(APP_DIR, env, { port });
}, 300_000);
afterAll(async () => {
  await app?.close();
  await issuer?.close();
});

describe.each(ROUTES)("examples/nextjs on the %s runtime (next start, %s)", (runtime, path) => {
  const send: Send = (request) => viaUrl(app.origin + path)(request);
  const post = (headers: Record<string, string>, body: string) =>
    send({ method: "POST", headers, body });

  it("should answer server/discover with the app's identity", async () => {
    const { status, result } = await call(send, "server/discover");
    expect(status).toBe(200);
    expect(result.supportedVersions).toContain("2026-07-28");
    expect(result.capabilities).toMatchObject({ tools: {} });
    expect(result.instructions).toContain(`${runtime} runtime`);
    expect(result._meta).toEqual({
      "io.modelcontextprotocol/serverInfo": { name: "mcp-mount-nextjs", version: "0.1.0" },
    });
  });

  it("should list the tools with their input schemas", async () => {
    const { status, result } = await call(send, "tools/list");
    expect(status).toBe(200);
    const tools = result.tools as { name: string; inputSchema: Record<string, unknown> }[];
    expect(tools.map((tool) => tool.name)).toEqual([
      "echo",
      "runtime",
      "countdown",
      "greet",
      "adder",
      "adder_add",
    ]);
    expect(tools[0]?.inputSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
  });

  it("should call echo and return the same text", async () => {
    const { status, result } = await call(send, "tools/call", {
      name: "echo",
      arguments: { text: "hello from Next.js" },
    });
    expect(status).toBe(200);
    expect(result.content).toEqual([{ type: "text", text: "hello from Next.js" }]);
    expect(result.isError).toBeUndefined();
  });

  it("should serve the adder app: its ui:// view, and its tool through the route", async () => {
    const { result } = await call(send, "resources/read", {
      uri: "ui://mcp-mount-example/adder.html",
    });
    const [view] = result.contents as { mimeType: string; text: string; _meta: unknown }[];
    expect(view?.mimeType).toBe("text/html;profile=mcp-app");
    expect(view?.text).toContain("ui/initialize");
    expect(view?._meta).toMatchObject({ ui: { prefersBorder: true } });
    const added = await call(send, "tools/call", { name: "adder_add", arguments: { a: 2, b: 3 } });
    expect(added.result.content).toEqual([{ type: "text", text: "2 + 3 = 5" }]);
  });

  it(`should run the tools on the ${runtime} runtime`, async () => {
    const { result } = await call(send, "tools/call", { name: "runtime", arguments: {} });
    expect(result.structuredContent).toEqual({ runtime });
  });

  it("should report invalid arguments as an isError result", async () => {
    const { status, result } = await call(send, "tools/call", {
      name: "echo",
      arguments: { text: 5 },
    });
    expect(status).toBe(200);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("text");
  });

  it("should stream progress over SSE, in order, before the result", async () => {
    const response = await fetch(app.origin + path, {
      method: "POST",
      headers: modernHeaders("tools/call", "countdown"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "countdown-1",
        method: "tools/call",
        params: {
          name: "countdown",
          arguments: { n: 10 },
          _meta: modernMeta({}, { progressToken: "p" }),
        },
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = new SseReader(response.body!);
    const arrivals: { message: Record<string, unknown> }[] = [];
    for (let message = await reader.next(10_000); message; message = await reader.next(10_000)) {
      assertModernMessage(message, "tools/call");
      arrivals.push({ message });
    }
    const progress = arrivals.slice(0, -1).map(({ message }) => message.params);
    expect(progress).toEqual(
      Array.from({ length: 10 }, (_, i) => ({
        progressToken: "p",
        progress: i + 1,
        total: 10,
        message: `${9 - i} to go`,
      })),
    );
    expect(arrivals.at(-1)?.message).toMatchObject({
      id: "countdown-1",
      result: { content: [{ type: "text", text: "Lift-off!" }] },
    });
  });

  it("should deliver a listen stream's first message while the stream stays open (no buffering)", async () => {
    const response = await fetch(app.origin + path, {
      method: "POST",
      headers: modernHeaders("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "listen-1",
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
      }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = new SseReader(response.body!);
    // A listen stream never ends by itself: a host that buffered SSE would deliver nothing.
    const ack = await reader.next(10_000);
    assertModernMessage(ack, "subscriptions/listen");
    expect(ack).toMatchObject({ method: "notifications/subscriptions/acknowledged" });
    expect(reader.ended).toBe(false);
    await reader.cancel();
  });

  it("should ask for input, then finish on the retry with the sealed requestState", async () => {
    const capabilities = { elicitation: {} };
    const first = await call(
      send,
      "tools/call",
      { name: "greet", arguments: {} },
      { capabilities },
    );
    expect(first.status).toBe(200);
    expect(first.result.resultType).toBe("input_required");
    const requests = first.result.inputRequests as Record<string, { method: string }>;
    expect(requests.name?.method).toBe("elicitation/create");
    expect(typeof first.result.requestState).toBe("string");
    const second = await call(
      send,
      "tools/call",
      {
        name: "greet",
        arguments: {},
        inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
        requestState: first.result.requestState,
      },
      { capabilities },
    );
    expect(second.result.content).toEqual([{ type: "text", text: "Hello, Ada!" }]);
  });

  it("should answer malformed JSON with 400 and -32700", async () => {
    const response = await post(modernHeaders("tools/list"), '{"jsonrpc":"2.0",');
    const { status, error } = readExchange(response, "tools/list");
    expect(status).toBe(400);
    expect(error?.code).toBe(-32700);
  });

  it("should answer a body that is not application/json with 415", async () => {
    const headers = { ...modernHeaders("tools/list"), "content-type": "text/plain" };
    const response = await post(headers, "{}");
    const { status, error } = readExchange(response, "tools/list");
    expect(status).toBe(415);
    expect(error?.code).toBe(-32600);
  });

  it("should answer a GET without a session: 400 with sessions, 405 when stateless (edge)", async () => {
    const response = await send({ method: "GET", headers: { accept: "text/event-stream" } });
    const { status, error, headers } = readExchange(response, "GET");
    if (runtime === "edge") {
      expect(status).toBe(405);
      expect(headers.get("allow")).toBe("POST");
    } else {
      expect(status).toBe(400);
    }
    expect(error?.code).toBe(-32600);
  });

  it("should refuse a cross-origin request with 403", async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: modernMeta() },
    });
    const response = await post(
      { ...modernHeaders("tools/list"), origin: "https://evil.example" },
      body,
    );
    const { status, error } = readExchange(response, "tools/list");
    expect(status).toBe(403);
    expect(error?.code).toBe(-32600);
  });

  it("should answer a CORS preflight from a loopback page before anything else, and refuse another site's", async () => {
    const asked = {
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, mcp-protocol-version, mcp-method, mcp-name",
    };
    const allowed = await send({ method: "OPTIONS", headers: { origin: PAGE_ORIGIN, ...asked } });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(PAGE_ORIGIN);
    expect(allowed.headers.get("vary")).toMatch(/Origin/);
    expect(allowed.headers.get("access-control-max-age")).toBe("7200");
    const headers = allowed.headers.get("access-control-allow-headers")?.toLowerCase() ?? "";
    for (const name of ["content-type", "authorization", "mcp-protocol-version", "mcp-method"])
      expect(headers).toContain(name);
    const refused = await send({
      method: "OPTIONS",
      headers: { origin: "https://evil.example", ...asked },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("should answer a loopback page's request with CORS headers, exposing MCP's", async () => {
    const response = await post(
      { ...modernHeaders("tools/list"), origin: PAGE_ORIGIN },
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: modernMeta() },
      }),
    );
    expect(readExchange(response, "tools/list").status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE_ORIGIN);
    expect(response.headers.get("access-control-expose-headers")).toContain("Mcp-Session-Id");
  });
});

describe("Host and Origin checks on examples/nextjs (next start -H 127.0.0.1)", () => {
  const listBody = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: modernMeta() },
  });
  const list = (path: string, headers: Record<string, string>) =>
    viaNodeHttp(app.origin + path)({
      method: "POST",
      headers: { ...modernHeaders("tools/list"), ...headers },
      body: listBody,
    });

  it.each(ROUTES)(
    "should refuse a Host naming another site with 403 on %s (DNS rebinding)",
    async (_runtime, path) => {
      const { status, error } = readExchange(
        await list(path, { host: `evil.example:${new URL(app.origin).port}` }),
        "tools/list",
      );
      expect(status).toBe(403);
      expect(error?.code).toBe(-32600);
      expect(error?.message).toMatch(/^Host not allowed/);
      const same = await list(path, { host: new URL(app.origin).host });
      expect(same.status).toBe(200);
    },
  );

  it("should accept a same-site request through a trusted proxy that sets X-Forwarded-Host and -Proto", async () => {
    const proxied = {
      host: new URL(app.origin).host,
      "x-forwarded-host": "mcp.example.com",
      "x-forwarded-proto": "https",
      origin: "https://mcp.example.com",
    };
    const { status, result } = readExchange(await list("/proxied/mcp", proxied), "tools/list");
    expect(status).toBe(200);
    expect(result?.tools).toBeInstanceOf(Array);
    // The same forwarded headers on the route that does not trust a proxy: the Origin is foreign.
    const untrusted = readExchange(await list("/mcp", proxied), "tools/list");
    expect(untrusted.status).toBe(403);
    expect(untrusted.error?.message).toBe("Origin not allowed");
  });

  it("should refuse, behind the trusted proxy, a forwarded host that is not the public name", async () => {
    const direct = readExchange(await list("/proxied/mcp", {}), "tools/list");
    expect(direct.status).toBe(403);
    expect(direct.error?.message).toMatch(/^Host not allowed/);
    const other = readExchange(
      await list("/proxied/mcp", { "x-forwarded-host": "evil.example" }),
      "tools/list",
    );
    expect(other.status).toBe(403);
  });

  it("should not print the no-secret warning while building, though no route had a secret", () => {
    // `next build` evaluates every route; the warning belongs to the first state sealed.
    expect(buildOutput).toContain("Collecting page data");
    expect(buildOutput).not.toContain("no `secret` given");
  });
});

describe("the readiness route of examples/nextjs", () => {
  it("should answer 200 with the MCP handler's health", async () => {
    const response = await fetch(`${app.origin}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ready: true, draining: false, store: "up" });
  });
});

describe("the Server Card of examples/nextjs (app/mcp/server-card, app/.well-known)", () => {
  const card = "/mcp/server-card";
  it("should serve the card of /mcp, valid, with a strong ETag, 304, HEAD and a preflight", async () => {
    const response = await fetch(app.origin + card);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/mcp-server-card+json");
    const body = await response.json();
    assertServerCard(body);
    expect(body.remotes).toEqual([
      expect.objectContaining({ type: "streamable-http", url: `${app.origin}/mcp` }),
    ]);
    const etag = response.headers.get("etag")!;
    const revalidated = await fetch(app.origin + card, { headers: { "if-none-match": etag } });
    expect(revalidated.status).toBe(304);
    const head = await fetch(app.origin + card, { method: "HEAD" });
    expect([head.status, head.headers.get("etag"), await head.text()]).toEqual([200, etag, ""]);
    const preflight = await fetch(app.origin + card, {
      method: "OPTIONS",
      headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("should point the AI Catalog at it, and serve it at the older well-known path", async () => {
    const catalog = await (await fetch(`${app.origin}/.well-known/ai-catalog.json`)).json();
    expect(catalog.entries).toEqual([
      expect.objectContaining({ url: app.origin + card, type: "application/mcp-server-card+json" }),
    ]);
    const alias = await fetch(`${app.origin}/.well-known/mcp/server-card.json`);
    expect(alias.headers.get("content-type")).toBe("application/json");
    expect(await alias.text()).toBe(await (await fetch(app.origin + card)).text());
  });
});

describe("a route reading its own request headers (examples/nextjs, /context/mcp)", () => {
  const send: Send = (request) => viaUrl(`${app.origin}/context/mcp`)(request);
  const requestInfo = (headers: Record<string, string>) =>
    call(send, "tools/call", { name: "request_info", arguments: {} }, { headers });

  it("should hand the tool the headers of the request that called it", async () => {
    const { status, result } = await requestInfo({
      "x-request-id": "next-req-1",
      "user-agent": "next-test/1.0",
    });
    expect(status).toBe(200);
    expect(result.structuredContent).toEqual({
      requestId: "next-req-1",
      userAgent: "next-test/1.0",
    });
    const bare = await requestInfo({ "user-agent": "next-test/1.0" });
    expect(bare.result.structuredContent).toEqual({ requestId: null, userAgent: "next-test/1.0" });
  });

  it("should read them again for every request of a legacy session", async () => {
    const session = await openSession(send);
    for (const requestId of ["legacy-1", "legacy-2"]) {
      const exchange = await legacyCall(
        send,
        session,
        "tools/call",
        { name: "request_info", arguments: {} },
        { "x-request-id": requestId },
      );
      expect(exchange.status).toBe(200);
      expect(exchange.result.structuredContent).toMatchObject({ requestId });
    }
  });
});

describe.each(ROUTES)("the official modern client against the %s route (%s)", (_runtime, path) => {
  async function connect(): Promise<Client> {
    const client = new Client(
      { name: "next-test", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: { form: {} } },
      },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Grace" },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(app.origin + path)));
    return client;
  }

  it("should list and call tools, with progress and an elicitation round trip", async () => {
    const client = await connect();
    try {
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getServerVersion()).toMatchObject({ name: "mcp-mount-nextjs" });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        "echo",
        "runtime",
        "countdown",
        "greet",
        "adder",
        "adder_add",
      ]);
      const echoed = await client.callTool({
        name: "echo",
        arguments: { text: "hi from the SDK" },
      });
      expect(echoed.content).toEqual([{ type: "text", text: "hi from the SDK" }]);
      const progress: number[] = [];
      const done = await client.callTool(
        { name: "countdown", arguments: { n: 3 } },
        { onprogress: (event: { progress: number }) => progress.push(event.progress) },
      );
      expect(done.content).toEqual([{ type: "text", text: "Lift-off!" }]);
      expect(progress).toEqual([1, 2, 3]);
      const greeted = await client.callTool({ name: "greet", arguments: {} });
      expect(greeted.content).toEqual([{ type: "text", text: "Hello, Grace!" }]);
    } finally {
      await client.close();
    }
  });
});

describe("bearer auth on examples/nextjs (next start, /auth/mcp)", () => {
  const endpoint = () => `${app.origin}/auth/mcp`;
  const metadataUrl = () => `${app.origin}/.well-known/oauth-protected-resource/auth/mcp`;
  const send: Send = (request) => viaUrl(endpoint())(request);
  // Signed in each test, once the issuer and `next start` are both up; `aud` is the endpoint URL.
  const token = (claims: Record<string, unknown> = {}, expiresInSec?: number) =>
    issuer.sign(
      { sub: "alice", aud: endpoint(), scope: "notes:read", ...claims },
      expiresInSec === undefined ? {} : { expiresInSec },
    );
  const withToken = (jwt: string): Send => withBearer(send, jwt);
  const invalidToken = (description: string) =>
    `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadataUrl()}", ${NOTE_SCOPES}`;

  it("should serve the Protected Resource Metadata of /auth/mcp at its well-known URL", async () => {
    const response = await fetch(metadataUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(await response.json()).toEqual({
      resource: endpoint(),
      authorization_servers: [issuer.url],
      scopes_supported: ["notes:read", "notes:write"],
      bearer_methods_supported: ["header"],
    });
  });

  it("should let a page on another origin read the 401's challenge and preflight the metadata", async () => {
    const response = await send({
      method: "POST",
      headers: { ...modernHeaders("tools/list"), origin: PAGE_ORIGIN },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: modernMeta() },
      }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE_ORIGIN);
    expect(response.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
    const preflight = await fetch(metadataUrl(), {
      method: "OPTIONS",
      headers: {
        origin: "https://any.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "mcp-protocol-version",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("MCP-Protocol-Version");
  });

  it("should answer 401 naming the metadata URL and the scopes when no token is sent", async () => {
    const exchange = await call(send, "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${metadataUrl()}", ${NOTE_SCOPES}`,
    );
    expect(exchange.error?.code).toBe(-32600);
  });

  it("should run whoami with the verified principal", async () => {
    const exchange = await call(withToken(await token()), "tools/call", {
      name: "whoami",
      arguments: {},
    });
    expect(exchange.status).toBe(200);
    expect(exchange.result.structuredContent).toEqual({
      issuer: issuer.url,
      subject: "alice",
      scopes: ["notes:read"],
    });
  });

  it("should answer 401 invalid_token for an expired token", async () => {
    const exchange = await call(withToken(await token({}, -120)), "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toBe(invalidToken("The access token expired"));
    expect(exchange.error?.message).toBe("Invalid access token: The access token expired");
  });

  it("should answer 401 invalid_token for a token meant for another endpoint (RFC 8707)", async () => {
    const exchange = await call(withToken(await token({ aud: `${app.origin}/mcp` })), "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toBe(
      invalidToken("The access token is not meant for this resource"),
    );
  });

  it("should answer 403 insufficient_scope for a tool the token has no scope for, then 200 once stepped up", async () => {
    const read = await call(withToken(await token()), "tools/call", {
      name: "read_notes",
      arguments: {},
    });
    expect(read.status).toBe(200);
    const denied = await call(withToken(await token()), "tools/call", {
      name: "delete_note",
      arguments: { id: "1" },
    });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", error_description="Needs scope notes:write", resource_metadata="${metadataUrl()}", ${NOTE_SCOPES}`,
    );
    expect(denied.error?.code).toBe(-32600);
    const stepped = withToken(await token({ scope: "notes:read notes:write" }));
    const deleted = await call(stepped, "tools/call", {
      name: "delete_note",
      arguments: { id: "1" },
    });
    expect(deleted.status).toBe(200);
    expect(deleted.result.content).toEqual([{ type: "text", text: "Deleted note 1" }]);
  });

  it("should refuse a token in the query string with 400", async () => {
    const url = `${endpoint()}?access_token=${await token()}`;
    const response = await viaUrl(url)({
      method: "POST",
      headers: modernHeaders("tools/list"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: modernMeta() },
      }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_request", error_description="Access tokens in the query string are not accepted", resource_metadata="${metadataUrl()}", ${NOTE_SCOPES}`,
    );
  });

  it("should bind a legacy session to the principal that opened it", async () => {
    const alice = withToken(await token());
    const session = await openSession(alice);
    expect((await legacyCall(alice, session, "tools/list")).status).toBe(200);
    const bob = withToken(await token({ sub: "bob" }));
    const stolen = await legacyCall(bob, session, "tools/list");
    expect(stolen.status).toBe(404);
    expect(stolen.error).toEqual((await legacyCall(bob, "no-such-session", "tools/list")).error);
  });
});

describe("the protected route of examples/nextjs without AUTH_ISSUER and AUTH_RESOURCE (same build)", () => {
  let bare: NextApp;
  beforeAll(async () => {
    bare = await startNextApp(APP_DIR, { ...ENV, AUTH_ISSUER: "", AUTH_RESOURCE: "" });
  }, 60_000);
  afterAll(() => bare?.close());

  it.each([
    ["the endpoint", "POST", "/auth/mcp"],
    ["the metadata", "GET", "/.well-known/oauth-protected-resource/auth/mcp"],
  ])("should answer %s with 501 naming the settings to make", async (_what, method, path) => {
    const response = await fetch(bare.origin + path, {
      method,
      headers: method === "POST" ? modernHeaders("tools/list") : {},
      body: method === "POST" ? "{}" : undefined,
    });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32603,
        message:
          "Auth is not configured: set AUTH_ISSUER (the OAuth issuer's URL) and AUTH_RESOURCE (this endpoint's public URL)",
      },
    });
  });
});

// A real browser against the same build: the page on its own loopback origin, the app's routes on
// another (admitted by the default allowedOrigins, since both are loopback).
describe("a page on another origin in Chromium against examples/nextjs", () => {
  let browser: Browser;
  let pageServer: PageServer;
  let tab: Page;
  beforeAll(async () => {
    [browser, pageServer] = await Promise.all([launchChromium(), servePage(await bundleClient())]);
  });
  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
  });
  beforeEach(async () => {
    tab = await browser.newPage();
    await tab.goto(`${pageServer.origin}/`);
    await tab.waitForFunction(() => (window as unknown as PageWindow).ready === true);
  });
  afterEach(() => tab.close());

  it.each(ROUTES)(
    "should list and call tools and finish an MRTR elicitation on the %s route (%s)",
    async (runtime, path) => {
      const outcome = await tab.evaluate(
        async ({ url }) => {
          const w = window as unknown as PageWindow;
          const client = await w.mcp.McpClient.connect(url, {
            era: "modern",
            fetch: w.capturingFetch,
            onInput: { elicitation: async () => ({ action: "accept", content: { name: "Ada" } }) },
          });
          const tools = (await client.tools()).map((tool) => tool.name);
          const runtime = (await client.callTool("runtime", {})).structuredContent;
          const greeting = (await client.callTool("greet", {})).content;
          await client.close();
          return { tools, runtime, greeting };
        },
        { url: app.origin + path },
      );
      expect(outcome.tools).toEqual([
        "echo",
        "runtime",
        "countdown",
        "greet",
        "adder",
        "adder_add",
      ]);
      expect(outcome.runtime).toEqual({ runtime });
      expect(outcome.greeting).toEqual([{ type: "text", text: "Hello, Ada!" }]);
      const captured = await tab.evaluate(() => (window as unknown as PageWindow).captured);
      const greets = captured.filter((entry) => entry.request?.includes('"greet"'));
      expect(greets.map((entry) => JSON.parse(entry.text).result.resultType)).toEqual([
        "input_required",
        "complete",
      ]);
      expect(assertCapturedMessages(captured)).toBeGreaterThanOrEqual(4);
    },
  );

  it("should call a tool with a bearer token on /auth/mcp", async () => {
    const token = await issuer.sign({ sub: "page-user", aud: `${app.origin}/auth/mcp` });
    const whoami = await tab.evaluate(
      async ({ url, token }) => {
        const w = window as unknown as PageWindow;
        const client = await w.mcp.McpClient.connect(url, {
          era: "modern",
          headers: { authorization: `Bearer ${token}` },
          fetch: w.capturingFetch,
        });
        const result = await client.callTool("whoami", {});
        await client.close();
        return result.structuredContent;
      },
      { url: `${app.origin}/auth/mcp`, token },
    );
    expect(whoami).toEqual({ issuer: issuer.url, subject: "page-user", scopes: [] });
    assertCapturedMessages(await tab.evaluate(() => (window as unknown as PageWindow).captured));
  });

  it("should run a legacy session on the Node.js route, its id read from the exposed header", async () => {
    const outcome = await tab.evaluate(
      async ({ url }) => {
        const w = window as unknown as PageWindow;
        const client = await w.mcp.McpClient.connect(url, {
          era: "legacy",
          fetch: w.capturingFetch,
          onInput: { elicitation: async () => ({ action: "accept", content: { name: "Lin" } }) },
        });
        const greeting = (await client.callTool("greet", {})).content;
        await client.close();
        return { era: client.era, greeting };
      },
      { url: `${app.origin}/mcp` },
    );
    expect(outcome).toEqual({ era: "legacy", greeting: [{ type: "text", text: "Hello, Lin!" }] });
    const captured = await tab.evaluate(() => (window as unknown as PageWindow).captured);
    expect(captured.find((entry) => entry.request?.includes('"initialize"'))?.sessionId).toMatch(
      /^[\x21-\x7e]+$/,
    );
    // The DELETE that ended it was answered: it named the session, read from the header.
    expect(captured.at(-1)).toMatchObject({ httpMethod: "DELETE", status: 200 });
    assertCapturedMessages(captured);
  });
});

describe("Events on examples/nextjs (next start, /events/mcp and its receiver /events/hooks)", () => {
  const send: Send = (request) => viaUrl(`${app.origin}/events/mcp`)(request);
  const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

  /** One events request through the route, checked by the modern schema and the events schema. */
  async function events(method: string, params: Record<string, unknown> = {}) {
    const exchange = await call(send, method, params);
    expect(exchange.status).toBe(200);
    assertEventsMessage(exchange.response, method);
    return exchange;
  }

  /** Emits note.created through the route's tool; resolves to the emit's eventId and cursor. */
  async function emitNote(id: string, text: string) {
    const { status, result } = await call(send, "tools/call", {
      name: "emit_note",
      arguments: { id, text },
    });
    expect(status).toBe(200);
    expect(result.isError).toBeUndefined();
    return result.structuredContent as { eventId: string; cursor: string };
  }

  it("should declare the extension in server/discover and list note.created, schema-valid", async () => {
    const discover = await call(send, "server/discover");
    expect(discover.status).toBe(200);
    expect(discover.result.capabilities).toMatchObject({
      extensions: { "io.modelcontextprotocol/events": { listChanged: true } },
    });
    const { result } = await events("events/list");
    expect(result.resultType).toBe("complete");
    expect(result.events).toEqual([
      expect.objectContaining({
        name: "note.created",
        description: "A note was created",
        delivery: ["poll", "push"],
        payloadSchema: expect.objectContaining({ required: ["id", "text"] }),
      }),
    ]);
  });

  it("should poll from now on a null cursor, then return the tool's emits in order with their cursors", async () => {
    const first = await events("events/poll", { name: "note.created", cursor: null });
    expect(first.result).toMatchObject({ events: [], truncated: false, hasMore: false });
    const emitted = [await emitNote("p1", "first"), await emitNote("p2", "second")];
    const second = await events("events/poll", {
      name: "note.created",
      cursor: first.result.cursor,
    });
    expect(second.result).toMatchObject({ truncated: false, hasMore: false });
    const occurrence = (id: string, text: string, index: number) =>
      expect.objectContaining({
        name: "note.created",
        eventId: emitted[index]!.eventId,
        data: { id, text },
      });
    expect(second.result.events).toEqual([
      occurrence("p1", "first", 0),
      occurrence("p2", "second", 1),
    ]);
    // The poll's cursor is after the last one, and each emit's cursor is the position after it.
    expect(second.result.cursor).toBe(emitted[1]!.cursor);
    const after = await events("events/poll", { name: "note.created", cursor: emitted[0]!.cursor });
    expect(after.result.events).toEqual([occurrence("p2", "second", 1)]);
    expect(after.result.cursor).toBe(emitted[1]!.cursor);
  });

  it("should push over the route's SSE response: active, then the occurrence a tool call emits", async () => {
    // openEventStream checks every message against the modern and the events schemas.
    const stream = await openEventStream(fetch, `${app.origin}/events/mcp`, {
      name: "note.created",
    });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toBe("text/event-stream");
      const active = await stream.next(10_000);
      expect(active).toMatchObject({
        method: "notifications/events/active",
        params: { truncated: false, cursor: expect.any(String) },
      });
      const { eventId, cursor } = await emitNote("s1", "pushed");
      const event = await stream.next(10_000);
      expect(event).toMatchObject({
        method: "notifications/events/event",
        params: { name: "note.created", eventId, cursor, data: { id: "s1", text: "pushed" } },
      });
      const meta = (event!.params as { _meta: Record<string, unknown> })._meta;
      expect(meta[SUBSCRIPTION]).toBe(stream.id);
      expect(stream.ended).toBe(false);
    } finally {
      await stream.cancel();
    }
  });

  it("should accept a delivery signed with the subscription's secret and refuse a tampered one with 401", async () => {
    // A real occurrence of the route, delivered as a webhook would carry it.
    const start = await events("events/poll", { name: "note.created", cursor: null });
    const { eventId } = await emitNote("w1", "by webhook");
    const polled = await events("events/poll", {
      name: "note.created",
      cursor: start.result.cursor,
    });
    const [occurrence] = polled.result.events as Record<string, unknown>[];
    expect(occurrence?.eventId).toBe(eventId);
    const deliver = (body: string, signedBody = body, id = "sub-next-1") => {
      const at = new Date();
      const signature = new Webhook(WEBHOOK_SECRET).sign(eventId, at, signedBody);
      return fetch(`${app.origin}/events/hooks`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": eventId,
          "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
          "webhook-signature": signature,
          "x-mcp-subscription-id": id,
        },
        body,
      });
    };
    const received = async () =>
      ((await (await fetch(`${app.origin}/events/hooks`)).json()) as { received: unknown[] })
        .received;

    const body = JSON.stringify(occurrence);
    const tampered = body.replace("by webhook", "by someone else");
    expect(tampered).not.toBe(body);
    const refused = await deliver(tampered, body, "sub-next-tampered");
    expect(refused.status).toBe(401);
    expect(await received()).toEqual([]);

    const accepted = await deliver(body);
    expect(accepted.status).toBe(204);
    const kept = { ...occurrence, subscriptionId: "sub-next-1" };
    expect(await received()).toEqual([kept]);
    // A repeat of the same webhook-id is acknowledged and not handed on again.
    expect((await deliver(body)).status).toBe(204);
    expect(await received()).toEqual([kept]);
  });
});
