import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { jwtAuth } from "../../src/auth/index.js";
import {
  createMcpHandler,
  type McpHandlerOptions,
  McpServer,
  type RequestInfo,
} from "../../src/index.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, viaFetch, withBearer } from "../helpers/modern.js";
import { sleep } from "../helpers/sleep.js";
import { assertModernMessage } from "../helpers/spec.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

const SCOPES = ["notes:read", "notes:write"];
const ALL = 'scope="notes:read notes:write"';

let issuer: LocalIssuer;
beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: SCOPES });
});
afterAll(() => issuer.close());

function notesServer(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.tool({ name: "whoami", description: "The caller" }, (_args, ctx) => ({
    issuer: ctx.auth?.issuer ?? null,
    subject: ctx.auth?.subject ?? null,
    clientId: ctx.auth?.clientId ?? null,
    scopes: ctx.auth?.scopes ?? [],
    token: ctx.auth?.token ?? null,
  }));
  server.tool({ name: "read_notes", scopes: ["notes:read"] }, () => "note 1");
  server.tool({ name: "delete_note", scopes: ["notes:write"] }, () => "deleted");
  server.tool({ name: "confirm" }, async (_args, ctx) => {
    const answer = await ctx.elicit("ok", {
      message: "Sure?",
      requestedSchema: { type: "object", properties: {} },
    });
    return answer.action;
  });
  return server;
}

/** The metadata URL RFC 9728 §3.1 gives an endpoint URL. */
function metadataUrl(endpoint: string): string {
  const { origin, pathname } = new URL(endpoint);
  return `${origin}/.well-known/oauth-protected-resource${pathname}`;
}

describe.each(TRANSPORTS)("jwtAuth through %s", (transport) => {
  let mounted: Mounted;
  let requests: RequestInfo[];
  const token = (claims: Record<string, unknown> = {}) =>
    issuer.sign({
      sub: "alice",
      aud: mounted.url,
      scope: "notes:read",
      client_id: "app",
      ...claims,
    });

  beforeEach(async () => {
    requests = [];
    const options: McpHandlerOptions = {
      secret: "auth-tests",
      auth: jwtAuth({ issuer: issuer.url, jwksUrl: issuer.jwksUrl, scopesSupported: SCOPES }),
      onRequest: (info) => requests.push(info),
    };
    mounted = await mount(transport, createMcpHandler(notesServer(), options));
  });
  afterEach(() => mounted.close());

  it("should serve Protected Resource Metadata at the path-suffixed well-known URL", async () => {
    const response = await mounted.at(metadataUrl(mounted.url))({ method: "GET", headers: {} });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(JSON.parse(response.text)).toEqual({
      resource: mounted.url,
      authorization_servers: [issuer.url],
      scopes_supported: SCOPES,
      bearer_methods_supported: ["header"],
    });
  });

  it("should answer 401 with the metadata URL and scopes when no token is sent", async () => {
    const exchange = await call(mounted.send, "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${metadataUrl(mounted.url)}", ${ALL}`,
    );
    expect(exchange.error?.code).toBe(-32600);
  });

  it("should run a tool with the verified principal as ctx.auth and in onRequest", async () => {
    const exchange = await call(withBearer(mounted.send, await token()), "tools/call", {
      name: "whoami",
      arguments: {},
    });
    expect(exchange.status).toBe(200);
    expect(exchange.result.structuredContent).toEqual({
      issuer: issuer.url,
      subject: "alice",
      clientId: "app",
      scopes: ["notes:read"],
      token: null,
    });
    const seen = requests.find((info) => info.method === "tools/call");
    expect(seen?.auth).toMatchObject({
      issuer: issuer.url,
      subject: "alice",
      scopes: ["notes:read"],
    });
    expect(JSON.stringify(seen)).not.toContain((await token()).split(".")[2]);
  });

  it("should answer 403 insufficient_scope naming the scope a tool needs", async () => {
    const send = withBearer(mounted.send, await token());
    expect((await call(send, "tools/call", { name: "read_notes", arguments: {} })).status).toBe(
      200,
    );
    const exchange = await call(send, "tools/call", { name: "delete_note", arguments: {} });
    expect(exchange.status).toBe(403);
    expect(exchange.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", error_description="Needs scope notes:write", resource_metadata="${metadataUrl(mounted.url)}", ${ALL}`,
    );
    expect(exchange.error?.code).toBe(-32600);
    const stepped = withBearer(mounted.send, await token({ scope: "notes:read notes:write" }));
    const retried = await call(stepped, "tools/call", { name: "delete_note", arguments: {} });
    expect(retried.status).toBe(200);
  });

  it("should refuse a token in the query string", async () => {
    const url = `${mounted.url}?access_token=${await token()}`;
    const response = await mounted.at(url)({
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{}",
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_request", /);
  });

  it("should bind a legacy session to the principal that opened it", async () => {
    const alice = withBearer(mounted.send, await token());
    const session = await openSession(alice);
    expect((await legacyCall(alice, session, "tools/list")).status).toBe(200);
    // A refreshed token of the same principal keeps the session.
    const refreshed = withBearer(mounted.send, await token({ jti: "refreshed" }));
    expect((await legacyCall(refreshed, session, "ping")).status).toBe(200);
    const bob = withBearer(mounted.send, await token({ sub: "bob" }));
    const stolen = await legacyCall(bob, session, "tools/list");
    expect(stolen.status).toBe(404);
    const unknown = await legacyCall(bob, "no-such-session", "tools/list");
    expect(stolen.error).toEqual(unknown.error);
    const get = await bob({
      method: "GET",
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    expect(get.status).toBe(404);
    const del = await bob({
      method: "DELETE",
      headers: { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    });
    expect(del.status).toBe(404);
    expect((await legacyCall(alice, session, "ping")).status).toBe(200);
  });

  it("should bind requestState to the principal", async () => {
    const capabilities = { elicitation: {} };
    const alice = withBearer(mounted.send, await token());
    const first = await call(
      alice,
      "tools/call",
      { name: "confirm", arguments: {} },
      { capabilities },
    );
    expect(first.result.resultType).toBe("input_required");
    const retry = {
      name: "confirm",
      arguments: {},
      inputResponses: { ok: { action: "accept", content: {} } },
      requestState: first.result.requestState,
    };
    const bob = withBearer(mounted.send, await token({ sub: "bob" }));
    const stolen = await call(bob, "tools/call", retry, { capabilities });
    expect(stolen.error?.code).toBe(-32602);
    const tampered = await call(
      alice,
      "tools/call",
      { ...retry, requestState: `${String(retry.requestState).slice(0, -4)}AAAA` },
      { capabilities },
    );
    expect(stolen.error?.message).toBe(tampered.error?.message);
    const own = await call(alice, "tools/call", retry, { capabilities });
    expect(own.result.content).toEqual([{ type: "text", text: "accept" }]);
  });
});

describe("jwtAuth token checks", () => {
  let mounted: Mounted;
  let errors: unknown[];
  const resource = "http://127.0.0.1/mcp";
  const challenge = (description: string) =>
    `Bearer error="invalid_token", error_description="${description}", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", ${ALL}`;
  const claims = { sub: "alice", aud: resource, scope: "notes:read" };

  async function expectRejected(jwt: string, description: string) {
    const exchange = await call(withBearer(mounted.send, jwt), "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toBe(challenge(description));
    expect(exchange.error?.message).toBe(`Invalid access token: ${description}`);
  }

  beforeEach(async () => {
    errors = [];
    const auth = jwtAuth({
      issuer: issuer.url,
      jwksUrl: issuer.jwksUrl,
      scopesSupported: SCOPES,
      jwksCooldownMs: 300,
      clockToleranceSec: 5,
    });
    mounted = await mount(
      "fetch",
      createMcpHandler(notesServer(), { auth, onError: (e) => errors.push(e) }),
    );
  });
  afterEach(() => mounted.close());

  it("should accept a valid token", async () => {
    const exchange = await call(withBearer(mounted.send, await issuer.sign(claims)), "tools/list");
    expect(exchange.status).toBe(200);
  });

  it("should refuse an expired token", async () => {
    await expectRejected(
      await issuer.sign(claims, { expiresInSec: -60 }),
      "The access token expired",
    );
  });

  it("should refuse a token that is not valid yet", async () => {
    const nbf = Math.floor(Date.now() / 1000) + 600;
    await expectRejected(
      await issuer.sign({ ...claims, nbf }),
      "The access token is not valid yet",
    );
  });

  it("should refuse a token from another issuer", async () => {
    await expectRejected(
      await issuer.sign({ ...claims, iss: "https://evil.example.com" }),
      "The access token has the wrong issuer",
    );
  });

  it("should refuse a token meant for another resource (RFC 8707)", async () => {
    await expectRejected(
      await issuer.sign({ ...claims, aud: "http://127.0.0.1/other" }),
      "The access token is not meant for this resource",
    );
  });

  it('should refuse alg "none"', async () => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${encode({ alg: "none" })}.${encode({ ...claims, iss: issuer.url, exp: now + 60 })}.`;
    await expectRejected(unsigned, "The access token's algorithm is not accepted");
  });

  it("should refuse an HS256 token signed with the RSA public key (algorithm confusion)", async () => {
    const { publicKey } = await generateKeyPair("RS256", { extractable: true });
    const pem = new TextEncoder().encode(await exportSPKI(publicKey));
    const forged = await issuer.sign(claims, { alg: "HS256", key: pem });
    await expectRejected(forged, "The access token's algorithm is not accepted");
  });

  it("should refuse a tampered payload", async () => {
    const [header, , signature] = (await issuer.sign(claims)).split(".");
    const payload = Buffer.from(
      JSON.stringify({
        ...claims,
        iss: issuer.url,
        exp: Math.floor(Date.now() / 1000) + 600,
        scope: "notes:write",
      }),
    ).toString("base64url");
    await expectRejected(
      `${header}.${payload}.${signature}`,
      "The access token's signature is not valid",
    );
  });

  it("should refetch the JWKS once for an unknown kid, then answer 401 without a fetch storm", async () => {
    await call(withBearer(mounted.send, await issuer.sign(claims)), "tools/list");
    const before = issuer.jwksFetches;
    // The JWKS cooldown (300 ms) runs out, so an unknown kid may refetch once.
    await sleep(350);
    const unknown = await issuer.sign(claims, { kid: "no-such-key" });
    await expectRejected(unknown, "No key of the issuer matches the access token");
    expect(issuer.jwksFetches).toBe(before + 1);
    await Promise.all(
      Array.from({ length: 20 }, () =>
        expectRejected(unknown, "No key of the issuer matches the access token"),
      ),
    );
    expect(issuer.jwksFetches).toBe(before + 1);
  });

  it("should pick up a rotated key", async () => {
    await call(withBearer(mounted.send, await issuer.sign(claims)), "tools/list");
    await issuer.rotate();
    // The JWKS cooldown (300 ms) runs out, so the new kid may refetch.
    await sleep(350);
    const exchange = await call(withBearer(mounted.send, await issuer.sign(claims)), "tools/list");
    expect(exchange.status).toBe(200);
  });

  it("should answer 401 without an error code to other schemes, and invalid_token to a malformed bearer", async () => {
    const basic = await call(
      mounted.send,
      "tools/list",
      {},
      { headers: { authorization: "Basic YTpi" } },
    );
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).not.toContain("error=");
    await expectRejected("not a jwt", "Malformed bearer token");
    await expectRejected("abc.def.ghi", "The access token is malformed");
  });

  it("should read scopes from scp and treat a client id as the subject", async () => {
    const jwt = await issuer.sign({
      aud: resource,
      client_id: "robot",
      scp: ["notes:read", "notes:write"],
    });
    const exchange = await call(withBearer(mounted.send, jwt), "tools/call", {
      name: "whoami",
      arguments: {},
    });
    expect(exchange.result.structuredContent).toMatchObject({
      subject: "robot",
      clientId: "robot",
      scopes: ["notes:read", "notes:write"],
    });
  });

  it("should answer 503 and report the error while the JWKS cannot be fetched", async () => {
    const down = jwtAuth({ issuer: issuer.url, jwksUrl: "http://127.0.0.1:1/jwks.json" });
    const mcp = createMcpHandler(notesServer(), { auth: down, onError: (e) => errors.push(e) });
    const exchange = await call(
      viaFetch(mcp.fetch),
      "tools/list",
      {},
      {
        headers: { authorization: `Bearer ${await issuer.sign(claims)}` },
      },
    );
    expect(exchange.status).toBe(503);
    expect(exchange.headers.get("retry-after")).toBe("5");
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).not.toContain("eyJ");
    await mcp.close();
  });
});

describe("scope-dependent lists", () => {
  it("should list only what the principal may use, as private, with hideUnauthorized", async () => {
    const auth = jwtAuth({ issuer: issuer.url, jwksUrl: issuer.jwksUrl, hideUnauthorized: true });
    const mounted = await mount("fetch", createMcpHandler(notesServer(), { auth }));
    const jwt = await issuer.sign({ sub: "alice", aud: mounted.url, scope: "notes:read" });
    const exchange = await call(withBearer(mounted.send, jwt), "tools/list");
    const names = (exchange.result.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(["whoami", "read_notes", "confirm"]);
    expect(exchange.result.cacheScope).toBe("private");
    assertModernMessage(exchange.response, "tools/list");
    await mounted.close();
  });

  it("should list everything, public, by default (clients step up on 403)", async () => {
    const auth = jwtAuth({ issuer: issuer.url, jwksUrl: issuer.jwksUrl });
    const mounted = await mount("fetch", createMcpHandler(notesServer(), { auth }));
    const jwt = await issuer.sign({ sub: "alice", aud: mounted.url, scope: "notes:read" });
    const exchange = await call(withBearer(mounted.send, jwt), "tools/list");
    expect((exchange.result.tools as unknown[]).length).toBe(4);
    expect(exchange.result.cacheScope).toBe("public");
    await mounted.close();
  });
});

describe("jwtAuth configuration", () => {
  it("should refuse unsafe or ambiguous configurations at construction", () => {
    const issuerUrl = "https://auth.example.com";
    expect(() =>
      jwtAuth({ issuer: issuerUrl, jwksUrl: "https://a/jwks", algorithms: ["none"] }),
    ).toThrow(/none/);
    expect(() =>
      jwtAuth({ issuer: issuerUrl, jwksUrl: "https://a/jwks", algorithms: ["HS256"] }),
    ).toThrow(/does not fit a public key/);
    expect(() =>
      jwtAuth({ issuer: issuerUrl, secret: "x".repeat(32), algorithms: ["RS256"] }),
    ).toThrow(/does not fit a shared secret/);
    expect(() => jwtAuth({ issuer: issuerUrl, secret: "short" })).toThrow(/32 bytes/);
    expect(() => jwtAuth({ issuer: issuerUrl })).toThrow(/exactly one/);
    expect(() =>
      jwtAuth({ issuer: issuerUrl, secret: "x".repeat(32), jwksUrl: "https://a/jwks" }),
    ).toThrow(/exactly one/);
    expect(() =>
      jwtAuth({ issuer: issuerUrl, jwksUrl: "https://a/jwks", resource: "https://a/mcp#x" }),
    ).toThrow(/fragment/);
  });

  it("should verify HS256 tokens with a shared secret, and expose the token only when asked", async () => {
    const secret = "a-shared-secret-of-at-least-32-bytes!";
    const auth = jwtAuth({ issuer: "https://auth.example.com", secret, exposeToken: true });
    const mounted = await mount("fetch", createMcpHandler(notesServer(), { auth }));
    const jwt = await new SignJWT({ sub: "carol", aud: mounted.url })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("https://auth.example.com")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(secret));
    const exchange = await call(withBearer(mounted.send, jwt), "tools/call", {
      name: "whoami",
      arguments: {},
    });
    expect(exchange.result.structuredContent).toMatchObject({ subject: "carol", token: jwt });
    await mounted.close();
  });
});
