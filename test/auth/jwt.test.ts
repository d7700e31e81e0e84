// jwtAuth through each transport: metadata, challenges, the principal, and what it binds.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler, type McpHandlerOptions, type RequestInfo } from "../../src/index.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, withBearer } from "../helpers/modern.js";
import { ALL, metadataUrl, notesServer, SCOPES } from "../helpers/notes-server.js";
import { type Mounted, mount, TRANSPORTS } from "../helpers/transports.js";

let issuer: LocalIssuer;
beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: SCOPES });
});
afterAll(() => issuer.close());

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
