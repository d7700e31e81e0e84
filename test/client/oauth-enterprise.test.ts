import { afterEach, describe, expect, it } from "vitest";
import { type EnterpriseOptions, OAuthError } from "../../src/client/index.js";
import { OAuthSession } from "../../src/client/oauth/session.js";
import {
  carried,
  startAuthServer,
  startProtectedServer,
  startTestServer,
  type TestServer,
  unsignedJwt,
} from "./oauth-servers.js";

/**
 * Enterprise-Managed Authorization (SEP-990) through real loopback servers: an enterprise
 * identity provider exchanging the user's ID token for an ID-JAG (RFC 8693), the MCP server's
 * authorization server taking it as a JWT-bearer grant (RFC 7523), and hostile ones.
 */

const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN = unsignedJwt({ iss: "idp", sub: "user@example.com", aud: "idp-client" });
const started: TestServer[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

/** An identity provider issuing ID-JAGs for the audience asked (or for `audience`, if given). */
async function startIdentityProvider(audience?: string): Promise<TestServer> {
  const idp = await startTestServer({
    "/.well-known/openid-configuration": (_request, url) => ({
      json: { issuer: url, token_endpoint: `${url}/token` },
    }),
    "/token": (request) => {
      const form = new URLSearchParams(request.body);
      const aud = audience ?? form.get("audience");
      return {
        json: {
          access_token: unsignedJwt({ aud, resource: form.get("resource"), sub: "user" }),
          issued_token_type: ID_JAG,
          token_type: "N_A",
        },
      };
    },
  });
  started.push(idp);
  return idp;
}

/** The real authorization server, a hostile one, and an MCP server naming one of them. */
async function world(names: "real" | "hostile") {
  const methods = ["client_secret_basic"];
  const real = await startAuthServer({ methods });
  const hostile = await startAuthServer({ methods });
  const mcp = await startProtectedServer(() => (names === "real" ? real : hostile).url);
  started.push(real, hostile, mcp);
  return { real, hostile, mcpUrl: `${mcp.url}/mcp` };
}

/** One request through a session with the enterprise grant: its status, or what it threw. */
async function call(mcpUrl: string, issuer: string, enterprise: EnterpriseOptions) {
  try {
    const session = new OAuthSession(mcpUrl, {
      grant: "enterprise_managed",
      enterprise,
      client: { clientId: "mcp-client", clientSecret: "mcp-client-secret", issuer },
    });
    const response = await session.fetch(mcpUrl, { method: "POST", body: "{}" });
    await response.body?.cancel();
    return response.status;
  } catch (error) {
    return error;
  }
}

const enterpriseAt = (idp: TestServer, issuer: string): EnterpriseOptions => ({
  idpIssuer: idp.url,
  idpClientId: "idp-client",
  idToken: ID_TOKEN,
  issuer,
});

describe("Enterprise-Managed Authorization (SEP-990)", () => {
  it("should exchange the ID token for an ID-JAG and present it at the authorization server", async () => {
    const idp = await startIdentityProvider();
    const { real, mcpUrl } = await world("real");
    expect(await call(mcpUrl, real.url, enterpriseAt(idp, real.url))).toBe(200);
    const exchange = new URLSearchParams(idp.seen.find((r) => r.path === "/token")?.body);
    expect(Object.fromEntries(exchange)).toMatchObject({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      requested_token_type: ID_JAG,
      audience: real.url,
      resource: mcpUrl,
      subject_token: ID_TOKEN,
      subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
      client_id: "idp-client",
    });
    const grant = real.seen.find((r) => r.path === "/token");
    const form = new URLSearchParams(grant?.body);
    expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    expect(form.get("assertion")).toBe(
      unsignedJwt({ aud: real.url, resource: mcpUrl, sub: "user" }),
    );
    expect(carried([grant!], "mcp-client-secret")).toBe(true);
  });

  it("should ask for no ID-JAG for, and send none to, an authorization server not configured", async () => {
    const idp = await startIdentityProvider();
    const { real, hostile, mcpUrl } = await world("hostile");
    const outcome = await call(mcpUrl, real.url, enterpriseAt(idp, real.url));
    expect(outcome).toBeInstanceOf(OAuthError);
    expect(String(outcome)).toContain(`for ${real.url} only`);
    expect(idp.seen).toEqual([]);
    expect(hostile.seen.filter((r) => r.method === "POST")).toEqual([]);
  });

  it("should not send an ID-JAG whose aud names another authorization server", async () => {
    const idp = await startIdentityProvider("https://elsewhere.example");
    const { real, mcpUrl } = await world("real");
    const outcome = await call(mcpUrl, real.url, enterpriseAt(idp, real.url));
    expect(outcome).toBeInstanceOf(OAuthError);
    expect(String(outcome)).toContain("ID-JAG is not for");
    expect(real.seen.filter((r) => r.path === "/token")).toEqual([]);
  });

  it("should use the identity provider's token endpoint when given, and a fresh ID token", async () => {
    const idp = await startIdentityProvider();
    const { real, mcpUrl } = await world("real");
    const enterprise: EnterpriseOptions = {
      ...enterpriseAt(idp, real.url),
      idpTokenEndpoint: `${idp.url}/token`,
      idToken: async () => ID_TOKEN,
    };
    expect(await call(mcpUrl, real.url, enterprise)).toBe(200);
    expect(idp.seen.map((r) => r.path)).toEqual(["/token"]);
  });

  it("should refuse the grant without `enterprise` when the session is made", () => {
    expect(
      () => new OAuthSession("http://127.0.0.1:9/mcp", { grant: "enterprise_managed" }),
    ).toThrow(OAuthError);
  });
});
