// The card as the handler's options shape it: the public URL behind a trusted proxy, the Host
// check, the serverCard option's fields and checks, auth, legacy off, and turning it off.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import { bearerAuth } from "../../src/auth/index.js";
import {
  createMcpHandler,
  type McpHandlerOptions,
  McpServer,
  type McpServerOptions,
  MODERN_VERSIONS,
} from "../../src/index.js";
import { type RawResponse, type Send, viaFetch, viaNodeHttp } from "../helpers/modern.js";
import { assertServerCard } from "../helpers/server-card-schema.js";

const info: McpServerOptions = { name: "fixture", version: "1.0.0" };

function endpoint(options: McpHandlerOptions = {}, serverInfo = info) {
  return createMcpHandler(new McpServer(serverInfo), options);
}

async function cardOf(send: Send, headers: Record<string, string> = {}) {
  const response = await send({ method: "GET", headers });
  return { response, card: cardBody(response) };
}

function cardBody(response: RawResponse): Record<string, unknown> & { remotes: { url: string }[] } {
  expect(response.status, response.text).toBe(200);
  const card = JSON.parse(response.text);
  assertServerCard(card);
  return card;
}

let servers: Server[] = [];
afterEach(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  servers = [];
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the card's public URL", () => {
  const forwarded = { "x-forwarded-host": "mcp.example.com", "x-forwarded-proto": "https" };

  it("should take the forwarded host and scheme of a trusted proxy (trustProxy)", async () => {
    const mcp = endpoint({ trustProxy: true, allowedHosts: ["mcp.example.com"] });
    const send = viaFetch(mcp.fetch, "http://10.0.0.5:3000/mcp/server-card");
    const { card } = await cardOf(send, forwarded);
    expect(card.name).toBe("com.example.mcp/fixture");
    expect(card.remotes[0]!.url).toBe("https://mcp.example.com/mcp");
  });

  it("should vary by the forwarded host and scheme too when it reads them (trustProxy)", async () => {
    const mcp = endpoint({ trustProxy: true, allowedHosts: ["mcp.example.com"] });
    const { response } = await cardOf(
      viaFetch(mcp.fetch, "http://10.0.0.5:3000/mcp/server-card"),
      forwarded,
    );
    expect(response.headers.get("vary")).toBe("Host, X-Forwarded-Host, X-Forwarded-Proto");
    const plain = endpoint();
    const direct = await cardOf(viaFetch(plain.fetch, "http://127.0.0.1/mcp/server-card"));
    expect(direct.response.headers.get("vary")).toBe("Host");
  });

  it("should take them over a real socket through node:http too", async () => {
    const origin = await listen(
      toNodeHandler(endpoint({ trustProxy: 1, allowedHosts: ["mcp.example.com"] })),
    );
    const { card } = await cardOf(viaNodeHttp(`${origin}/tenant/mcp/server-card`), forwarded);
    expect(card.remotes[0]!.url).toBe("https://mcp.example.com/tenant/mcp");
  });

  it("should ignore forwarded headers without trustProxy: any client can send them", async () => {
    const origin = await listen(toNodeHandler(endpoint()));
    const { card } = await cardOf(viaNodeHttp(`${origin}/mcp/server-card`), forwarded);
    expect(card.remotes[0]!.url).toBe(`${origin}/mcp`);
  });

  it("should be refused, like any request, for a host allowedHosts does not list", async () => {
    const mcp = endpoint({ trustProxy: true, allowedHosts: ["mcp.example.com"] });
    const send = viaFetch(mcp.fetch, "http://10.0.0.5:3000/mcp/server-card");
    const refused = await send({ method: "GET", headers: { "x-forwarded-host": "evil.example" } });
    expect(refused.status).toBe(403);
  });

  it("should name a configured absolute endpoint on every path, and in the AI Catalog", async () => {
    const mcp = endpoint({ serverCard: { endpoint: "https://api.example.com/v1/mcp" } });
    const { response, card } = await cardOf(
      viaFetch(mcp.fetch, "http://127.0.0.1/mcp/server-card"),
    );
    expect(card.remotes[0]!.url).toBe("https://api.example.com/v1/mcp");
    // The same body whatever the request's host: nothing to vary by.
    expect(response.headers.get("vary")).toBeNull();
    const catalog = await viaFetch(
      mcp.fetch,
      "http://127.0.0.1/.well-known/ai-catalog.json",
    )({
      method: "GET",
      headers: {},
    });
    expect(JSON.parse(catalog.text).entries[0].url).toBe(
      "https://api.example.com/v1/mcp/server-card",
    );
  });
});

describe("the serverCard option", () => {
  const send = (options: McpHandlerOptions, serverInfo = info) =>
    viaFetch(endpoint(options, serverInfo).fetch, "http://127.0.0.1/mcp/server-card");

  it("should replace the generated fields with the ones it gives", async () => {
    const fields = {
      name: "com.example/weather",
      description: "Forecasts for any city",
      repository: { url: "https://github.com/example/weather", source: "github" },
      remotes: [{ type: "streamable-http" as const, url: "https://{tenant}.example.com/mcp" }],
      _meta: { "com.example/tier": "free" },
    };
    const { card } = await cardOf(send({ serverCard: fields }));
    expect(card).toMatchObject(fields);
    expect(card.remotes).toEqual(fields.remotes);
  });

  it("should refuse at construction a card the schema would refuse", () => {
    expect(() => endpoint({ serverCard: { name: "no-slash" } })).toThrow(TypeError);
    expect(() => endpoint({ serverCard: { description: "x".repeat(101) } })).toThrow(TypeError);
    expect(() => endpoint({ serverCard: { title: "" } })).toThrow(TypeError);
    expect(() => endpoint({ serverCard: { endpoint: "mcp" } })).toThrow(TypeError);
  });

  it("should cut a long description to 100 characters and make a name the schema accepts", async () => {
    const long = { name: "my server!", version: "1.0.0", description: "é".repeat(150) };
    const { card } = await cardOf(send({}, long));
    expect([...(card.description as string)]).toHaveLength(100);
    expect(card.name).toBe("127.0.0.1/my-server-");
    const ipv6 = viaFetch(endpoint().fetch, "http://[::1]:3000/mcp/server-card");
    const onIpv6 = await cardOf(ipv6);
    expect(onIpv6.card.name).toBe("--1/fixture");
    expect(onIpv6.card.remotes[0]!.url).toBe("http://[::1]:3000/mcp");
  });

  it("should describe a server without a description by its title", async () => {
    const { card } = await cardOf(send({}, { ...info, title: "Fixture" }));
    expect(card.description).toBe("Fixture, an MCP server");
  });

  it("should list only the modern version when legacy clients are not served", async () => {
    const { card } = await cardOf(send({ legacy: false }));
    expect(card.remotes[0]).toMatchObject({ supportedProtocolVersions: [...MODERN_VERSIONS] });
  });

  it("should serve nothing with false: the paths reach the endpoint as before", async () => {
    const mcp = endpoint({ serverCard: false });
    expect(mcp.servesServerCard).toBe(false);
    const response = await viaFetch(
      mcp.fetch,
      "http://127.0.0.1/mcp/server-card",
    )({
      method: "GET",
      headers: { accept: "text/event-stream" },
    });
    expect(response.headers.get("etag")).toBeNull();
    expect(response.headers.get("content-type")).not.toContain("server-card");
  });

  it("should leave /mcp/server-card to the Express app when it is off", async () => {
    const app = express();
    app.use("/mcp", toExpress(endpoint({ serverCard: false })));
    app.get("/mcp/server-card", (_req, res) => {
      res.type("text/plain").send("the app's own");
    });
    const origin = await listen(app);
    const response = await fetch(`${origin}/mcp/server-card`);
    expect(await response.text()).toBe("the app's own");
  });
});

describe("the card behind auth", () => {
  const auth = () =>
    bearerAuth({
      authorizationServers: ["https://auth.example.com"],
      resource: "https://mcp.example.com/mcp",
      verify: () => undefined,
    });

  it("should be off unless serverCard is given, as the landing page names no server there", async () => {
    const mcp = endpoint({ auth: auth() });
    expect(mcp.servesServerCard).toBe(false);
    const response = await viaFetch(
      mcp.fetch,
      "http://127.0.0.1/mcp/server-card",
    )({
      method: "GET",
      headers: {},
    });
    expect(response.status).toBe(401);
  });

  it("should be public once given, its remote the auth resource, and need no token", async () => {
    const mcp = endpoint({ auth: auth(), serverCard: {} });
    const { card } = await cardOf(viaFetch(mcp.fetch, "http://127.0.0.1/mcp/server-card"));
    expect(card.remotes[0]!.url).toBe("https://mcp.example.com/mcp");
    const catalog = await viaFetch(
      mcp.fetch,
      "http://127.0.0.1/.well-known/ai-catalog.json",
    )({
      method: "GET",
      headers: {},
    });
    expect(JSON.parse(catalog.text).entries[0]).toMatchObject({
      identifier: "urn:air:mcp.example.com:mcp:fixture",
      url: "https://mcp.example.com/mcp/server-card",
    });
  });
});
