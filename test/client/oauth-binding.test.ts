import { afterEach, describe, expect, it } from "vitest";
import { OAuthError, type OAuthOptions } from "../../src/client/index.js";
import { OAuthSession } from "../../src/client/oauth/session.js";
import {
  carried,
  startAuthServer,
  startProtectedServer,
  type TestServer,
  unsignedJwt,
} from "./oauth-servers.js";

/**
 * Credentials stay with the authorization server they belong to: a hostile MCP server naming
 * its own authorization server (both real servers on loopback) gets no assertion, secret or
 * key-signed request from the client.
 */

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const started: TestServer[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

/** The real authorization server, a hostile one, and an MCP server naming `names`. */
async function world(names: "real" | "hostile", options: Parameters<typeof startAuthServer>[0]) {
  const real = await startAuthServer(options);
  const hostile = await startAuthServer(options);
  const mcp = await startProtectedServer(() => (names === "real" ? real : hostile).url);
  started.push(real, hostile, mcp);
  return { real, hostile, mcpUrl: `${mcp.url}/mcp` };
}

/** One request through a session signing in with `auth`: its status, or what it threw. */
async function call(mcpUrl: string, auth: OAuthOptions): Promise<number | unknown> {
  try {
    const session = new OAuthSession(mcpUrl, auth);
    const response = await session.fetch(mcpUrl, { method: "POST", body: "{}" });
    await response.body?.cancel();
    return response.status;
  } catch (error) {
    return error;
  }
}

describe("a jwt_bearer assertion (RFC 7523) goes to its own authorization server only", () => {
  it("should not send the assertion to another authorization server than assertionIssuer", async () => {
    const { real, hostile, mcpUrl } = await world("hostile", {});
    const assertion = unsignedJwt({ aud: "https://anything.example", sub: "workload" });
    const outcome = await call(mcpUrl, {
      grant: "jwt_bearer",
      assertion,
      assertionIssuer: real.url,
    });
    expect(outcome).toBeInstanceOf(OAuthError);
    expect(String(outcome)).toContain(`for ${real.url} only`);
    expect(carried(hostile.seen, assertion)).toBe(false);
    // Refused before any request to it: no registration either.
    expect(hostile.seen.filter((r) => r.method === "POST")).toEqual([]);
  });

  it("should not send the assertion to an authorization server its aud does not name", async () => {
    const { real, hostile, mcpUrl } = await world("hostile", {});
    const assertion = unsignedJwt({ aud: real.url, sub: "workload" });
    const outcome = await call(mcpUrl, { grant: "jwt_bearer", assertion });
    expect(outcome).toBeInstanceOf(OAuthError);
    expect(String(outcome)).toContain("its aud names another");
    expect(carried(hostile.seen, assertion)).toBe(false);
  });

  it("should send the assertion to the authorization server it names, and get a token", async () => {
    const { real, mcpUrl } = await world("real", {});
    const assertion = unsignedJwt({ aud: `${real.url}/`, sub: "workload" });
    expect(await call(mcpUrl, { grant: "jwt_bearer", assertion })).toBe(200);
    const token = real.seen.find((r) => r.path === "/token");
    const form = new URLSearchParams(token?.body);
    expect(form.get("grant_type")).toBe(JWT_BEARER);
    expect(form.get("assertion")).toBe(assertion);
  });

  it("should register for the jwt-bearer grant, not the authorization-code one", async () => {
    const { real, mcpUrl } = await world("real", {});
    const assertion = unsignedJwt({ aud: real.url });
    expect(await call(mcpUrl, { grant: "jwt_bearer", assertion })).toBe(200);
    const registration = real.seen.find((r) => r.path === "/register");
    expect(JSON.parse(registration?.body ?? "{}")).toMatchObject({
      grant_types: [JWT_BEARER],
      response_types: [],
    });
  });
});

describe("a pre-registered client's secret or key goes to its own issuer only", () => {
  it("should refuse a clientSecret that names no issuer, sending it nowhere", async () => {
    const { hostile, mcpUrl } = await world("hostile", { methods: ["client_secret_basic"] });
    const outcome = await call(mcpUrl, {
      grant: "client_credentials",
      client: { clientId: "machine", clientSecret: "machine-secret-value" },
    });
    expect(outcome).toBeInstanceOf(OAuthError);
    expect(String(outcome)).toContain("needs its `issuer`");
    expect(carried(hostile.seen, "machine-secret-value")).toBe(false);
    expect(hostile.seen).toEqual([]);
  });

  it("should refuse a privateKey that names no issuer, signing nothing for another server", async () => {
    const { hostile, mcpUrl } = await world("hostile", { methods: ["private_key_jwt"] });
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const outcome = await call(mcpUrl, {
      grant: "client_credentials",
      client: { clientId: "machine", privateKey: keys.privateKey },
    });
    expect(outcome).toBeInstanceOf(OAuthError);
    expect(hostile.seen.filter((r) => r.path === "/token")).toEqual([]);
  });

  it("should keep a bound secret from the server another MCP server names", async () => {
    const { real, hostile, mcpUrl } = await world("hostile", { methods: ["client_secret_basic"] });
    const client = { clientId: "machine", clientSecret: "machine-secret-value", issuer: real.url };
    await call(mcpUrl, { grant: "client_credentials", client });
    expect(carried(hostile.seen, "machine-secret-value")).toBe(false);
  });

  it("should send a bound secret to its own issuer", async () => {
    const { real, mcpUrl } = await world("real", { methods: ["client_secret_basic"] });
    const client = { clientId: "machine", clientSecret: "machine-secret-value", issuer: real.url };
    expect(await call(mcpUrl, { grant: "client_credentials", client })).toBe(200);
    expect(carried(real.seen, "machine-secret-value")).toBe(true);
  });
});
