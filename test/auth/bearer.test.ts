import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerAuth, InvalidTokenError } from "../../src/auth/index.js";
import type { McpAuth } from "../../src/auth/types.js";
import { type AuthInfo, createMcpHandler, McpServer } from "../../src/index.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, viaFetch, withBearer } from "../helpers/modern.js";
import { type Mounted, mount } from "../helpers/transports.js";

const AS = "https://auth.example.com";
const TOKENS: Record<string, AuthInfo> = {
  "opaque-alice": { issuer: AS, subject: "alice", scopes: ["notes:read"], token: "leaked?" },
  "opaque-admin": { issuer: AS, subject: "admin", scopes: ["notes:read", "admin"] },
};

function server(): McpServer {
  const s = new McpServer({ name: "opaque", version: "1.0.0" });
  s.tool({ name: "whoami" }, (_args, ctx) => ({
    subject: ctx.auth?.subject ?? null,
    token: ctx.auth?.token ?? null,
  }));
  return s;
}

describe("bearerAuth around a verify function (opaque tokens, introspection)", () => {
  const resources: string[] = [];
  const errors: unknown[] = [];
  const auth = bearerAuth({
    authorizationServers: [AS],
    scopesSupported: ["notes:read", "admin"],
    requiredScopes: ["notes:read"],
    resourceName: "Opaque notes",
    verify(token, { resource }) {
      resources.push(resource);
      if (token === "revoked") throw new InvalidTokenError("The access token was revoked");
      if (token === "introspection-down") throw new Error("introspection endpoint unreachable");
      return TOKENS[token];
    },
  });
  const mcp = createMcpHandler(server(), { auth, onError: (error) => errors.push(error) });
  const send = viaFetch(mcp.fetch);
  const metadata = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp";

  it("should pass the endpoint's URL to verify and hide the token from handlers", async () => {
    const exchange = await call(withBearer(send, "opaque-alice"), "tools/call", {
      name: "whoami",
      arguments: {},
    });
    expect(exchange.status).toBe(200);
    expect(exchange.result.structuredContent).toEqual({ subject: "alice", token: null });
    expect(resources.at(-1)).toBe("http://127.0.0.1/mcp");
  });

  it("should answer 401 invalid_token for an unknown token, with the generic reason", async () => {
    const exchange = await call(withBearer(send, "nobody"), "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="The access token is not valid", resource_metadata="${metadata}", scope="notes:read"`,
    );
  });

  it("should pass the reason of an InvalidTokenError to the client", async () => {
    const exchange = await call(withBearer(send, "revoked"), "tools/list");
    expect(exchange.status).toBe(401);
    expect(exchange.headers.get("www-authenticate")).toContain(
      'error_description="The access token was revoked"',
    );
  });

  it("should answer 503 when verify cannot decide, and report it", async () => {
    const before = errors.length;
    const exchange = await call(withBearer(send, "introspection-down"), "tools/list");
    expect(exchange.status).toBe(503);
    expect(exchange.error?.code).toBe(-32603);
    expect(errors.length).toBe(before + 1);
  });

  it("should require requiredScopes on every request, GET and DELETE included", async () => {
    const weak = bearerAuth({
      authorizationServers: [AS],
      requiredScopes: ["admin"],
      verify: (token) => TOKENS[token],
    });
    const strict = viaFetch(createMcpHandler(server(), { auth: weak }).fetch);
    for (const method of ["GET", "DELETE"]) {
      const response = await withBearer(
        strict,
        "opaque-alice",
      )({
        method,
        headers: { accept: "text/event-stream", "mcp-session-id": "x" },
      });
      expect(response.status).toBe(403);
      expect(response.headers.get("www-authenticate")).toContain('scope="notes:read admin"');
    }
    const admin = await call(withBearer(strict, "opaque-admin"), "tools/list");
    expect(admin.status).toBe(200);
  });

  it("should serve metadata only at the configured resource's path, and only by GET", async () => {
    const proxied = bearerAuth({
      authorizationServers: [AS],
      resource: "https://api.example.com/mcp",
      verify: () => undefined,
    });
    const mcp2 = createMcpHandler(server(), { auth: proxied });
    const get = (url: string, method = "GET") => mcp2.fetch(new Request(url, { method }));
    const found = await get("http://10.0.0.5:8080/.well-known/oauth-protected-resource/mcp");
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual({
      resource: "https://api.example.com/mcp",
      authorization_servers: [AS],
      bearer_methods_supported: ["header"],
    });
    expect(
      (await get("http://10.0.0.5:8080/.well-known/oauth-protected-resource/other")).status,
    ).toBe(404);
    expect(
      (await get("http://10.0.0.5:8080/.well-known/oauth-protected-resource/mcp", "POST")).status,
    ).toBe(405);
    const challenge = await call(viaFetch(mcp2.fetch, "http://10.0.0.5:8080/mcp"), "tools/list");
    expect(challenge.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it("should name the resource in its metadata document", async () => {
    const response = await mcp.fetch(new Request(metadata));
    expect(await response.json()).toMatchObject({ resource_name: "Opaque notes" });
  });

  it("should answer 404 for the metadata path on an endpoint without auth", async () => {
    const open = createMcpHandler(server());
    const response = await open.fetch(new Request(metadata));
    expect(response.status).toBe(404);
  });

  it("should refuse bad configuration at construction", () => {
    const verify = () => undefined;
    expect(() => bearerAuth({ authorizationServers: [], verify })).toThrow(/at least one/);
    expect(() => bearerAuth({ authorizationServers: ["http://auth.example.com"], verify })).toThrow(
      /https/,
    );
    expect(() =>
      bearerAuth({ authorizationServers: [AS], scopesSupported: ['bad"scope'], verify }),
    ).toThrow(/Invalid scope/);
  });
});

describe.each(["node", "express"] as const)(
  "bearerAuth principals without a subject (%s)",
  (transport) => {
    const errors: unknown[] = [];
    let mounted: Mounted;
    beforeAll(async () => {
      // Client-credentials introspection: a client id, no subject; "anonymous" names neither.
      const auth = bearerAuth({
        authorizationServers: [AS],
        verify: (token) =>
          token === "anonymous"
            ? { issuer: AS, scopes: [] }
            : { issuer: AS, clientId: token, scopes: [] },
      });
      mounted = await mount(
        transport,
        createMcpHandler(server(), { auth, onError: (error) => errors.push(error) }),
      );
    });
    afterAll(() => mounted.close());

    it("should make the client id the subject, so one client cannot use another's session", async () => {
      const clientA = withBearer(mounted.send, "client-a");
      const clientB = withBearer(mounted.send, "client-b");
      const session = await openSession(clientA);
      const stolen = await legacyCall(clientB, session, "tools/list");
      const unknown = await legacyCall(clientB, "no-such-session", "tools/list");
      expect(stolen.status).toBe(404);
      expect(stolen.error).toEqual(unknown.error);
      const own = await legacyCall(clientA, session, "tools/call", {
        name: "whoami",
        arguments: {},
      });
      expect(own.status).toBe(200);
      expect(own.result?.structuredContent).toEqual({ subject: "client-a", token: null });
    });

    it("should answer 401 invalid_token to a token whose principal names no subject and no client", async () => {
      const exchange = await call(withBearer(mounted.send, "anonymous"), "tools/list");
      expect(exchange.status).toBe(401);
      expect(exchange.headers.get("www-authenticate")).toContain(
        'error="invalid_token", error_description="The access token names no subject or client"',
      );
    });
  },
);

describe("an auth layer of the app's own whose principal names nobody", () => {
  it("should answer 500 and report it, rather than bind every caller to one principal", async () => {
    const errors: unknown[] = [];
    const auth: McpAuth = {
      resource: undefined,
      requiredScopes: [],
      challengeScopes: [],
      hideUnauthorized: false,
      verify: async () => ({ valid: true, auth: { issuer: AS, scopes: [] } }),
      metadata: (resource) => ({ resource, authorization_servers: [AS] }),
    };
    const mounted = await mount(
      "node",
      createMcpHandler(server(), { auth, onError: (error) => errors.push(error) }),
    );
    try {
      const exchange = await call(withBearer(mounted.send, "anything"), "tools/list");
      expect(exchange.status).toBe(500);
      expect(exchange.error?.code).toBe(-32603);
      expect(String(errors[0])).toMatch(/no subject and no clientId/);
    } finally {
      await mounted.close();
    }
  });
});
