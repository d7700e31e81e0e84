import {
  Client as ModernClient,
  ClientCredentialsProvider as ModernCredentials,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { type Mounted, mount } from "../helpers/transports.js";

const SCOPES = ["notes:read", "notes:write"];

/** What crossed the wire, in order: method, URL and status of each exchange. */
type Exchange = { method: string; url: string; status: number };

function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    log.push({ method: request.method, url: request.url, status: response.status });
    return response;
  };
}

function notesServer(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.tool({ name: "whoami" }, (_args, ctx) => ({
    subject: ctx.auth?.subject ?? null,
    scopes: ctx.auth?.scopes ?? [],
  }));
  server.tool({ name: "delete_note", scopes: ["notes:write"] }, () => "deleted");
  return server;
}

let issuer: LocalIssuer;
let mounted: Mounted;
let log: Exchange[];

beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: SCOPES });
  const auth = jwtAuth({ issuer: issuer.url, jwksUrl: issuer.jwksUrl, scopesSupported: SCOPES });
  mounted = await mount("node", createMcpHandler(notesServer(), { auth, secret: "interop-auth" }));
});
afterAll(async () => {
  await mounted.close();
  await issuer.close();
});
beforeEach(() => {
  log = [];
});

/** The discovery the spec asks of a client: 401, the metadata document, the issuer, a token. */
function expectDiscovery(): void {
  const metadataUrl = mounted.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
  expect(log[0]).toMatchObject({ method: "POST", url: mounted.url, status: 401 });
  expect(log).toContainEqual({ method: "GET", url: metadataUrl, status: 200 });
  const token = log.findIndex((exchange) => exchange.url === `${issuer.url}/token`);
  expect(log[token]?.status).toBe(200);
  expect(log.slice(token + 1)).toContainEqual({ method: "POST", url: mounted.url, status: 200 });
}

describe("the official legacy client (@modelcontextprotocol/sdk v1) with OAuth", () => {
  it("should get 401, discover the metadata, obtain a token and call a tool", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(mounted.url), {
      authProvider: new ClientCredentialsProvider({
        clientId: "legacy-app",
        clientSecret: "unused",
        expectedIssuer: issuer.url,
        scope: "notes:read",
      }),
      fetch: recordingFetch(log),
    });
    const client = new Client({ name: "legacy-auth", version: "0.0.0" });
    await client.connect(transport);
    expectDiscovery();
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.structuredContent).toEqual({ subject: "legacy-app", scopes: ["notes:read"] });
    const tokensBefore = log.filter((e) => e.url === `${issuer.url}/token`).length;
    const denied = await client.callTool({ name: "delete_note", arguments: {} }).then(
      () => "called",
      (error: unknown) => String(error),
    );
    // The client reads our 403 as a step-up challenge and fetches a new token; its
    // client-credentials provider asks for its configured scope only, so the retry is refused too.
    expect(denied).toContain("Server returned 403 after trying upscoping");
    expect(log.filter((e) => e.url === `${issuer.url}/token`)).toHaveLength(tokensBefore + 1);
    await client.close();
  });
});

describe("the official modern client (@modelcontextprotocol/client) with OAuth", () => {
  it("should get 401, discover the metadata, obtain a token and call a tool", async () => {
    const transport = new ModernTransport(new URL(mounted.url), {
      authProvider: new ModernCredentials({
        clientId: "modern-app",
        clientSecret: "unused",
        expectedIssuer: issuer.url,
        scope: "notes:read notes:write",
      }),
      fetch: recordingFetch(log),
    });
    const client = new ModernClient({ name: "modern-auth", version: "0.0.0" });
    await client.connect(transport);
    expectDiscovery();
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.structuredContent).toEqual({
      subject: "modern-app",
      scopes: ["notes:read", "notes:write"],
    });
    const deleted = await client.callTool({ name: "delete_note", arguments: {} });
    expect(deleted.content).toEqual([{ type: "text", text: "deleted" }]);
    await client.close();
  });
});
