// jwtAuth options: lists filtered by scope, configurations refused at construction, HS256.
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler } from "../../src/index.js";
import { call, withBearer } from "../helpers/modern.js";
import { notesServer, SCOPES } from "../helpers/notes-server.js";
import { assertModernMessage } from "../helpers/spec.js";
import { mount } from "../helpers/transports.js";

let issuer: LocalIssuer;
beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: SCOPES });
});
afterAll(() => issuer.close());

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
