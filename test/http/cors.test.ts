// CORS in the Web core, through every host: the fetch handler, node:http, Express 5 and 4.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
// Express 4 is installed under an alias so both majors are tested against the same adapter.
import express4 from "express4";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { toExpress, toExpressMetadata } from "../../src/adapters/express.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler, type McpHandler, type McpHandlerOptions } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { legacyHeaders, readLegacy } from "../helpers/legacy.js";
import {
  modernHeaders,
  modernMeta,
  type RawResponse,
  readExchange,
  type Send,
  viaUrl,
} from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

const PAGE = "http://localhost:5173";
const OTHER = "http://127.0.0.1:6006";
const EVIL = "https://evil.example";
const HOSTS = [...TRANSPORTS, "express4"] as const;

/** Express 4 mounted as `mount("express")` mounts Express 5. */
async function mountExpress4(mcp: McpHandler): Promise<Mounted> {
  const app = express4();
  app.use(toExpressMetadata(mcp) as never);
  const router = express4.Router();
  router.use("/mcp", toExpress(mcp) as never);
  app.use("/api", router);
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp`;
  return {
    send: viaUrl(url),
    url,
    at: viaUrl,
    close: async () => {
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function mountOn(host: (typeof HOSTS)[number], mcp: McpHandler): Promise<Mounted> {
  return host === "express4" ? mountExpress4(mcp) : mount(host, mcp);
}

function listed(response: RawResponse, name: string): string[] {
  return (response.headers.get(name) ?? "").split(",").map((value) => value.trim().toLowerCase());
}

function preflight(send: Send, origin: string, headers = "content-type, authorization") {
  return send({
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": headers,
    },
  });
}

function toolsCall(origin: string | undefined, extra: Record<string, string> = {}) {
  return {
    method: "POST",
    headers: { ...modernHeaders("tools/call", "echo"), ...(origin && { origin }), ...extra },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" }, _meta: modernMeta() },
    }),
  };
}

/** An error answer: a JSON-RPC error body the schema accepts (what a browser client reads). */
function expectJsonRpcError(response: RawResponse): void {
  expect(response.headers.get("content-type")).toBe("application/json");
  assertModernMessage(JSON.parse(response.text), "tools/call");
}

function expectCorsFor(response: RawResponse, origin: string): void {
  expect(response.headers.get("access-control-allow-origin")).toBe(origin);
  expect(response.headers.get("access-control-allow-credentials")).toBe("true");
  expect(listed(response, "vary")).toContain("origin");
  expect(listed(response, "access-control-expose-headers")).toEqual(
    expect.arrayContaining([
      "mcp-session-id",
      "mcp-protocol-version",
      "www-authenticate",
      "retry-after",
      "ratelimit",
      "ratelimit-policy",
    ]),
  );
}

let issuer: LocalIssuer;
beforeAll(async () => {
  issuer = await startLocalIssuer();
});
afterAll(() => issuer.close());

describe.each(HOSTS)("CORS through %s", (host) => {
  let mounted: Mounted;
  let mcp: McpHandler;
  const token = () => issuer.sign({ sub: "alice", aud: mounted.url });
  const withToken = async (request: ReturnType<typeof toolsCall>) => ({
    ...request,
    headers: { ...request.headers, authorization: `Bearer ${await token()}` },
  });

  beforeEach(async () => {
    const options: McpHandlerOptions = {
      secret: "cors-tests",
      allowedOrigins: [PAGE, /^http:\/\/127\.0\.0\.1:\d+$/],
      cors: { credentials: true, maxAge: 600, allowedHeaders: ["X-Request-Id"] },
      auth: jwtAuth({ issuer: issuer.url, jwksUrl: issuer.jwksUrl }),
      maxBodyBytes: 2_000,
    };
    mcp = createMcpHandler(createFixtureServer(), options);
    mounted = await mountOn(host, mcp);
  });
  afterEach(() => mounted.close());

  it("should answer a preflight from an allowed origin before auth, naming MCP's headers", async () => {
    const response = await preflight(mounted.send, PAGE);
    expect(response.status).toBe(204);
    expect(response.text).toBe("");
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(response.headers.get("access-control-allow-credentials")).toBe("true");
    expect(response.headers.get("access-control-max-age")).toBe("600");
    expect(listed(response, "vary")).toContain("origin");
    expect(listed(response, "access-control-allow-methods")).toEqual(
      expect.arrayContaining(["get", "post", "delete"]),
    );
    expect(listed(response, "access-control-allow-headers")).toEqual(
      expect.arrayContaining([
        "content-type",
        "authorization",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
        "last-event-id",
        // The fixture's `regional` tool mirrors two parameters.
        "mcp-param-region",
        "mcp-param-count",
        "x-request-id",
      ]),
    );
  });

  it("should allow an origin a RegExp of allowedOrigins matches", async () => {
    const response = await preflight(mounted.send, OTHER);
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(OTHER);
  });

  it("should allow the Mcp-Param header of a tool registered after the endpoint started", async () => {
    mcp.server.tool(
      {
        name: "by_tenant",
        input: {
          type: "object",
          properties: { tenant: { type: "string", "x-mcp-header": "Tenant" } },
        },
      },
      ({ tenant }) => String(tenant),
    );
    const response = await preflight(mounted.send, PAGE, "mcp-param-tenant");
    expect(listed(response, "access-control-allow-headers")).toContain("mcp-param-tenant");
  });

  it("should refuse a preflight from an origin not allowed: 403 and no CORS header", async () => {
    const response = await preflight(mounted.send, EVIL);
    expect(response.status).toBe(403);
    expectJsonRpcError(response);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(response.headers.get("access-control-allow-headers")).toBeNull();
    expect(JSON.parse(response.text).error).toEqual({
      code: -32600,
      message: "Origin not allowed",
    });
  });

  it("should answer an allowed origin's request with CORS headers and MCP's exposed", async () => {
    const response = await mounted.send(await withToken(toolsCall(PAGE)));
    expect(response.status).toBe(200);
    expectCorsFor(response, PAGE);
    expect(readExchange(response, "tools/call").result.content).toEqual([
      { type: "text", text: "hi" },
    ]);
  });

  it("should answer an origin not allowed with 403 and no CORS header, as before", async () => {
    const response = await mounted.send(await withToken(toolsCall(EVIL)));
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(JSON.parse(response.text).error.message).toBe("Origin not allowed");
  });

  it("should send no CORS header to a request without Origin (not a browser's)", async () => {
    const response = await mounted.send(await withToken(toolsCall(undefined)));
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("should put CORS headers on a 401 so the page can read the challenge", async () => {
    const response = await mounted.send(toolsCall(PAGE));
    expect(response.status).toBe(401);
    expectJsonRpcError(response);
    expectCorsFor(response, PAGE);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata=/);
  });

  it("should put CORS headers on a 413 for a body past the limit", async () => {
    const request = await withToken(toolsCall(PAGE));
    const response = await mounted.send({
      ...request,
      body: request.body.replace("hi", "x".repeat(5_000)),
    });
    expect(response.status).toBe(413);
    expectJsonRpcError(response);
    expectCorsFor(response, PAGE);
  });

  it("should put CORS headers on a 415 and a 405", async () => {
    const request = await withToken(toolsCall(PAGE));
    const wrongType = await mounted.send({
      ...request,
      headers: { ...request.headers, "content-type": "text/plain" },
    });
    expect(wrongType.status).toBe(415);
    expectCorsFor(wrongType, PAGE);
    expectJsonRpcError(wrongType);
    const put = await mounted.send({ method: "PUT", headers: request.headers, body: request.body });
    expect(put.status).toBe(405);
    expectCorsFor(put, PAGE);
    expectJsonRpcError(put);
  });

  it("should expose a legacy session's id to the page", async () => {
    const response = await mounted.send({
      method: "POST",
      headers: {
        ...legacyHeaders(),
        origin: PAGE,
        authorization: `Bearer ${await token()}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "page", version: "1" },
        },
      }),
    });
    expect(response.status).toBe(200);
    readLegacy(response, "initialize");
    expect(response.headers.get("mcp-session-id")).toBeTruthy();
    expectCorsFor(response, PAGE);
  });

  it("should let any origin read the Protected Resource Metadata, and answer its preflight", async () => {
    const { origin, pathname } = new URL(mounted.url);
    const send = mounted.at(`${origin}/.well-known/oauth-protected-resource${pathname}`);
    const document = await send({ method: "GET", headers: { origin: EVIL } });
    expect(document.status).toBe(200);
    expect(document.headers.get("access-control-allow-origin")).toBe("*");
    expect(JSON.parse(document.text).resource).toBe(mounted.url);
    const asked = await send({
      method: "OPTIONS",
      headers: {
        origin: EVIL,
        "access-control-request-method": "GET",
        "access-control-request-headers": "mcp-protocol-version",
      },
    });
    expect(asked.status).toBe(204);
    expect(asked.headers.get("access-control-allow-origin")).toBe("*");
    expect(asked.headers.get("access-control-allow-credentials")).toBeNull();
    expect(listed(asked, "access-control-allow-headers")).toContain("mcp-protocol-version");
  });

  it("should put CORS headers on a 429, so the page can read Retry-After and RateLimit", async () => {
    const limited = await mountOn(
      host,
      createMcpHandler(createFixtureServer(), {
        secret: "s",
        allowedOrigins: [PAGE],
        cors: { credentials: true },
        rateLimit: { points: 1 },
      }),
    );
    try {
      expect((await limited.send(toolsCall(PAGE))).status).toBe(200);
      const response = await limited.send(toolsCall(PAGE));
      expect(response.status).toBe(429);
      expectJsonRpcError(response);
      expectCorsFor(response, PAGE);
      expect(response.headers.get("retry-after")).not.toBeNull();
      expect(response.headers.get("ratelimit")).not.toBeNull();
    } finally {
      await limited.close();
    }
  });

  it("should put CORS headers on the 503 of a draining endpoint", async () => {
    const request = await withToken(toolsCall(PAGE));
    void mcp.close();
    const response = await mounted.send(request);
    expect(response.status).toBe(503);
    expectJsonRpcError(response);
    expectCorsFor(response, PAGE);
    expect(response.headers.get("retry-after")).not.toBeNull();
  });
});

describe("CORS options (fetch)", () => {
  const open = (options: McpHandlerOptions) =>
    viaFetch(createMcpHandler(createFixtureServer(), { secret: "s", ...options }));
  const viaFetch =
    (mcp: McpHandler): Send =>
    async (request) => {
      const response = await mcp.fetch(new Request("http://127.0.0.1/mcp", request));
      return { status: response.status, headers: response.headers, text: await response.text() };
    };

  it("should answer any origin with * when allowedOrigins is *, without credentials", async () => {
    const send = open({ allowedOrigins: "*" });
    const response = await send(toolsCall(EVIL));
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    expect((await preflight(send, EVIL)).headers.get("access-control-allow-origin")).toBe("*");
  });

  it("should refuse credentials with allowedOrigins * or none when the endpoint is created", () => {
    expect(() =>
      createMcpHandler(createFixtureServer(), { allowedOrigins: "*", cors: { credentials: true } }),
    ).toThrow(/cors.credentials/);
    expect(() => createMcpHandler(createFixtureServer(), { cors: { credentials: true } })).toThrow(
      /cors.credentials needs allowedOrigins/,
    );
    expect(() =>
      createMcpHandler(createFixtureServer(), {
        allowedOrigins: (origin) => origin === PAGE,
        cors: { credentials: true },
      }),
    ).not.toThrow();
    expect(() => createMcpHandler(createFixtureServer(), { cors: { maxAge: -1 } })).toThrow(
      /maxAge/,
    );
  });

  it("should refuse an allowedOrigins entry no browser sends when the endpoint is created", () => {
    const make = (origin: string) => () =>
      createMcpHandler(createFixtureServer(), { allowedOrigins: [origin] });
    // A trailing slash, a default port or capitals would never match and fail silently.
    expect(make("http://localhost:5173/")).toThrow(/did you mean "http:\/\/localhost:5173"/);
    expect(make("https://app.example.com:443")).toThrow(/"https:\/\/app.example.com"/);
    expect(make("https://App.Example.com")).toThrow(/"https:\/\/app.example.com"/);
    expect(make("app.example.com")).toThrow(/allowedOrigins/);
    expect(make("chrome-extension://abcdef/")).toThrow(/"chrome-extension:\/\/abcdef"/);
    for (const origin of ["http://localhost:5173", "chrome-extension://abcdef", "null"])
      expect(make(origin)).not.toThrow();
  });

  it("should ask an async allowedOrigins function once per request, for both the check and CORS", async () => {
    const asked: string[] = [];
    const send = open({
      allowedOrigins: async (origin) => {
        asked.push(origin);
        return origin.endsWith(".tenant.example");
      },
    });
    const allowed = await send(toolsCall("https://a.tenant.example"));
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://a.tenant.example");
    expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
    const refused = await send(toolsCall(EVIL));
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect(asked).toEqual(["https://a.tenant.example", EVIL]);
  });

  it("should answer 500 without CORS when the allowedOrigins function throws", async () => {
    const errors: unknown[] = [];
    const send = open({
      allowedOrigins: () => {
        throw new Error("lookup failed");
      },
      onError: (error) => errors.push(error),
    });
    const response = await send(toolsCall(PAGE));
    expect(response.status).toBe(500);
    expectJsonRpcError(response);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(errors).toEqual([new Error("lookup failed")]);
  });

  it("should follow the default Origin rule: loopback pages reach a loopback endpoint", async () => {
    const send = open({});
    const loopbackHost = { host: "127.0.0.1:3000" };
    const response = await send(toolsCall(PAGE, loopbackHost));
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect((await send(toolsCall(EVIL, loopbackHost))).status).toBe(403);
  });

  it("should leave CORS to the app with cors: false, keeping the Origin check", async () => {
    const send = open({ allowedOrigins: [PAGE], cors: false });
    const answered = await preflight(send, PAGE);
    expect(answered.status).toBe(405);
    expect(answered.headers.get("access-control-allow-origin")).toBeNull();
    const response = await send(toolsCall(PAGE));
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect((await send(toolsCall(EVIL))).status).toBe(403);
  });
});
