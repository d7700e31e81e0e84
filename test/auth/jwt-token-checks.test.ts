// What jwtAuth accepts and refuses in a token, and how it fetches the issuer's keys.
import { exportSPKI, generateKeyPair } from "jose";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler } from "../../src/index.js";
import { call, viaFetch, withBearer } from "../helpers/modern.js";
import { ALL, notesServer, SCOPES } from "../helpers/notes-server.js";
import { sleep } from "../helpers/sleep.js";
import { type Mounted, mount } from "../helpers/transports.js";

let issuer: LocalIssuer;
beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: SCOPES });
});
afterAll(() => issuer.close());

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
