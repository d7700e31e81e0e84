import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpClient, type OAuthOptions, type OAuthStore, type StoredTokens } from "mcp-mount/client";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAuthExampleApp } from "../../examples/express-auth/app.js";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { OAuthSession, tokensKey } from "../../src/client/oauth/session.js";

/**
 * McpClient signing in to our own jwtAuth example (examples/express-auth) with the local
 * issuer's authorization-code flow: the issuer approves at once, so `redirect` follows its 302
 * the way a browser would, and returns where it was sent.
 */

interface Listening {
  url: string;
  close(): Promise<void>;
}

function listen(server: Server): Promise<Listening> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A store the test can read and change, as another process sharing the file would. */
function openStore(): OAuthStore & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    get: (key) => values.get(key),
    set: (key, value) => void values.set(key, value),
    delete: (key) => void values.delete(key),
  };
}

/** Sign-in options whose `redirect` follows the issuer's answer; the URLs it saw are kept. */
function signIn(store: OAuthStore): OAuthOptions & { seen: URL[] } {
  const seen: URL[] = [];
  return {
    seen,
    store,
    redirectUri: "http://127.0.0.1:9/callback",
    redirect: async (authorizationUrl) => {
      seen.push(authorizationUrl);
      const response = await fetch(authorizationUrl, { redirect: "manual" });
      return (
        response.headers.get("location") ?? `http://127.0.0.1:9/callback?error=${response.status}`
      );
    },
  };
}

let issuer: LocalIssuer;
let mcp: Listening;
let mcpUrl: string;

beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: ["notes:read", "notes:write"] });
  const { app } = createAuthExampleApp({
    issuer: issuer.url,
    jwksUrl: issuer.jwksUrl,
    // A 401 asks for notes:read only; writing needs a step up to notes:write.
    requiredScopes: ["notes:read"],
    secret: "oauth-client-test-secret-of-32-bytes!",
  });
  mcp = await listen(createServer(app));
  mcpUrl = `${mcp.url}/mcp`;
});

afterAll(async () => {
  await mcp?.close();
  await issuer?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

function keptTokens(store: ReturnType<typeof openStore>): StoredTokens {
  return JSON.parse(store.values.get(tokensKey(mcpUrl))!) as StoredTokens;
}

describe.each(["modern", "legacy"] as const)("McpClient OAuth sign-in (%s era)", (era) => {
  it("should sign in on the 401, call a tool, and step up when a tool needs more scope", async () => {
    const store = openStore();
    const auth = signIn(store);
    const client = await McpClient.connect(mcpUrl, { auth, era });
    const who = await client.callTool("whoami", {});
    expect(who.structuredContent).toMatchObject({ issuer: issuer.url, scopes: ["notes:read"] });
    // The authorization request: PKCE S256, the resource, the challenge's scope.
    const first = auth.seen[0]!.searchParams;
    expect(first.get("code_challenge_method")).toBe("S256");
    expect(first.get("resource")).toBe(mcpUrl);
    expect(first.get("scope")).toBe("notes:read");

    const added = await client.callTool("add_note", { text: "signed in" });
    expect(added.isError).toBeFalsy();
    expect(auth.seen).toHaveLength(2);
    expect(auth.seen[1]!.searchParams.get("scope")).toBe("notes:read notes:write");
    expect(keptTokens(store).scope).toBe("notes:read notes:write");
    await client.close();
  });

  it("should refresh a token about to expire, and one the server refuses as expired", async () => {
    const store = openStore();
    const first = await McpClient.connect(mcpUrl, { auth: signIn(store), era });
    await first.callTool("whoami", {});
    await first.close();
    const refreshes = () => issuer.tokenRequests.filter((r) => r.grantType === "refresh_token");
    const before = refreshes().length;

    // Another process finds the token expiring: it refreshes before sending, without the user.
    store.values.set(
      tokensKey(mcpUrl),
      JSON.stringify({ ...keptTokens(store), expiresAt: Date.now() }),
    );
    const auth = signIn(store);
    const second = await McpClient.connect(mcpUrl, { auth, era });
    expect((await second.callTool("whoami", {})).isError).toBeFalsy();
    await second.close();
    expect(refreshes().length).toBe(before + 1);

    // A token that expired early (the server says 401): refreshed on the 401, then retried.
    const expired = await issuer.sign(
      { sub: "x", aud: mcpUrl, scope: "notes:read" },
      { expiresInSec: -300 },
    );
    const kept = keptTokens(store);
    store.values.set(tokensKey(mcpUrl), JSON.stringify({ ...kept, accessToken: expired }));
    const third = await McpClient.connect(mcpUrl, { auth, era });
    expect((await third.callTool("whoami", {})).isError).toBeFalsy();
    await third.close();
    expect(refreshes().length).toBe(before + 2);
    expect(auth.seen).toHaveLength(0);
  });
});

describe("tokens stay with the server they are for", () => {
  it("should send tokens only to the MCP server's origin, and print them nowhere", async () => {
    const store = openStore();
    const sent: { origin: string; authorization: string | null }[] = [];
    const recording: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      sent.push({
        origin: url.origin,
        authorization: new Headers(init?.headers).get("authorization"),
      });
      return fetch(input, init);
    };
    const printed: unknown[] = [];
    for (const method of ["log", "error", "warn", "info", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation(
        (...args: unknown[]) => void printed.push(...args),
      );
    }
    const client = await McpClient.connect(mcpUrl, { auth: signIn(store), fetch: recording });
    await client.callTool("add_note", { text: "x" });
    const failure = await client.callTool("no_such_tool", {}).catch((error: unknown) => error);
    await client.close();

    const { accessToken, refreshToken } = keptTokens(store);
    const bearing = sent.filter((s) => s.authorization?.startsWith("Bearer "));
    expect(bearing.length).toBeGreaterThan(0);
    expect(new Set(bearing.map((s) => s.origin))).toEqual(new Set([mcp.url]));
    // The issuer (another origin) saw OAuth requests, none with a bearer token.
    expect(sent.some((s) => s.origin === issuer.url)).toBe(true);
    const shown = JSON.stringify([
      printed.map(String),
      String(failure),
      (failure as Error).message,
    ]);
    for (const secret of [accessToken, refreshToken!]) expect(shown).not.toContain(secret);
  });

  it("should not carry the token through a redirect to another origin", async () => {
    const seenElsewhere: IncomingHttpHeaders[] = [];
    const elsewhere = await listen(
      createServer((req, res) => {
        seenElsewhere.push(req.headers);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      }),
    );
    const redirecting = await listen(
      createServer((_req, res) => res.writeHead(307, { location: `${elsewhere.url}/mcp` }).end()),
    );
    const store = openStore();
    const tokens: StoredTokens = {
      accessToken: "secret-access-token",
      issuer: issuer.url,
      resource: `${redirecting.url}/mcp`,
    };
    store.values.set(tokensKey(`${redirecting.url}/mcp`), JSON.stringify(tokens));
    const session = new OAuthSession(`${redirecting.url}/mcp`, { store });
    const response = await session.fetch(`${redirecting.url}/mcp`, { method: "POST", body: "{}" });
    expect(response.status).toBe(307);
    // Asked directly for another origin, the session sends no token either.
    await (await session.fetch(`${elsewhere.url}/mcp`, { method: "POST", body: "{}" })).text();
    expect(seenElsewhere).toHaveLength(1);
    expect(seenElsewhere[0]!.authorization).toBeUndefined();
    await redirecting.close();
    await elsewhere.close();
  });

  it("should keep secrets out of the errors of a failed sign-in", async () => {
    // A client registered as public, presenting a secret: its token request is refused.
    const options = signIn(openStore());
    const registered = await fetch(`${issuer.url}/register`, {
      method: "POST",
      body: JSON.stringify({ redirect_uris: [options.redirectUri] }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const auth: OAuthOptions = {
      ...options,
      client: { clientId, clientSecret: "very-secret-client-secret", issuer: issuer.url },
    };
    const failure = await McpClient.connect(mcpUrl, { auth }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    const shown = `${String(failure)} ${JSON.stringify(failure)} ${(failure as Error).stack}`;
    expect(shown).toContain("invalid_grant");
    expect(shown).not.toContain("very-secret-client-secret");
    expect(shown).not.toMatch(/code=|code_verifier/);
  });
});

describe("concurrent requests and one refresh token", () => {
  it("should refresh once when two requests meet a 401 with the same token", async () => {
    // Sign in once for a refresh token, then keep a token the server refuses as expired.
    const store = openStore();
    const first = await McpClient.connect(mcpUrl, { auth: signIn(store) });
    await first.close();
    const expired = await issuer.sign(
      { sub: "x", aud: mcpUrl, scope: "notes:read" },
      { expiresInSec: -300 },
    );
    store.values.set(
      tokensKey(mcpUrl),
      JSON.stringify({ ...keptTokens(store), accessToken: expired }),
    );
    const refreshes = () => issuer.tokenRequests.filter((r) => r.grantType === "refresh_token");
    const before = refreshes().length;
    // The second request's 401 is held until the first request goes again with its refreshed
    // token, so it finds a newer token than the one it sent (a rotated refresh token used twice
    // may revoke the grant, RFC 9700 §4.14.2).
    let release!: () => void;
    const renewedSent = new Promise<void>((resolve) => (release = resolve));
    let expiredSent = 0;
    const holding: typeof fetch = async (input, init) => {
      const bearer = new Headers(init?.headers).get("authorization");
      if (bearer?.startsWith("Bearer ") && bearer !== `Bearer ${expired}`) release();
      const response = await fetch(input, init);
      if (bearer === `Bearer ${expired}` && ++expiredSent === 2) await renewedSent;
      return response;
    };
    const session = new OAuthSession(mcpUrl, signIn(store), holding);
    const post = () =>
      session.fetch(mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    const statuses = await Promise.all([post(), post()].map(async (r) => (await r).status));
    expect(statuses.filter((status) => status === 401)).toEqual([]);
    expect(expiredSent).toBe(2);
    expect(refreshes().length).toBe(before + 1);
  });
});

describe("where the user is sent to sign in", () => {
  it("should refuse an authorization endpoint that is not HTTP(S) before sending the user there", async () => {
    // A protected server whose authorization server names a file: URL to sign in at (a browser
    // opener or a desktop shell would open it).
    const origin = { url: "" };
    const documents: Record<string, unknown> = {
      "/.well-known/oauth-protected-resource/mcp": {
        resource: "",
        authorization_servers: [""],
      },
      "/.well-known/oauth-authorization-server": {
        issuer: "",
        authorization_endpoint: "file:///etc/passwd",
        token_endpoint: "",
        registration_endpoint: "",
        code_challenge_methods_supported: ["S256"],
      },
    };
    const protectedServer = await listen(
      createServer((req, res) => {
        const path = new URL(req.url ?? "/", origin.url).pathname;
        if (path === "/register") {
          res.writeHead(201, { "content-type": "application/json" });
          res.end(JSON.stringify({ client_id: "c", token_endpoint_auth_method: "none" }));
          return;
        }
        const document = documents[path];
        if (document) {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document));
          return;
        }
        res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
      }),
    );
    origin.url = protectedServer.url;
    Object.assign(documents["/.well-known/oauth-protected-resource/mcp"] as object, {
      resource: `${origin.url}/mcp`,
      authorization_servers: [origin.url],
    });
    Object.assign(documents["/.well-known/oauth-authorization-server"] as object, {
      issuer: origin.url,
      token_endpoint: `${origin.url}/token`,
      registration_endpoint: `${origin.url}/register`,
    });
    const auth = signIn(openStore());
    const session = new OAuthSession(`${origin.url}/mcp`, auth);
    const failure = await session
      .fetch(`${origin.url}/mcp`, { method: "POST", body: "{}" })
      .catch((error: unknown) => error);
    await protectedServer.close();
    expect(failure).toBeInstanceOf(Error);
    expect(auth.seen).toEqual([]);
  });
});
