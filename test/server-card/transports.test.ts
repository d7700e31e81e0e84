// The Server Card and the AI Catalog through every way a handler is mounted (fetch, node:http,
// Express): the same documents, headers, ETag revalidation and refusals on each.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, McpServer, SUPPORTED_VERSIONS } from "../../src/index.js";
import { call, type RawResponse, type Send } from "../helpers/modern.js";
import { assertServerCard } from "../helpers/server-card-schema.js";
import { type Mounted, mount, TRANSPORTS, type TransportName } from "../helpers/transports.js";

/** Where each transport mounts the endpoint (test/helpers/transports.ts). */
const ENDPOINT_PATH: Record<TransportName, string> = {
  fetch: "/mcp",
  node: "/mcp",
  express: "/api/mcp",
};

const get = (send: Send, headers: Record<string, string> = {}) =>
  send({ method: "GET", headers: { accept: "application/mcp-server-card+json", ...headers } });

/** The header names a response's `Vary` lists, lower-cased. */
function varyOf(response: RawResponse): string[] {
  return (response.headers.get("vary") ?? "").split(",").map((name) => name.trim().toLowerCase());
}

function json(response: RawResponse): Record<string, unknown> {
  return JSON.parse(response.text) as Record<string, unknown>;
}

describe.each(TRANSPORTS)("the Server Card through %s", (transport) => {
  let mounted: Mounted;
  let card: Send;
  beforeAll(async () => {
    const server = new McpServer({
      name: "weather",
      version: "2.1.0",
      title: "Weather",
      description: "Forecasts for any city",
      websiteUrl: "https://weather.example.com",
      icons: [{ src: "https://weather.example.com/icon.png", mimeType: "image/png" }],
    });
    server.tool({ name: "forecast" }, () => "sunny");
    const mcp = createMcpHandler(server, { serverCard: { endpoint: ENDPOINT_PATH[transport] } });
    mounted = await mount(transport, mcp);
    card = mounted.at(`${mounted.url}/server-card`);
  });
  afterAll(() => mounted?.close());

  it("should serve the card at <endpoint>/server-card, valid against the published schema", async () => {
    const response = await get(card);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/mcp-server-card+json");
    const body = json(response);
    assertServerCard(body);
    expect(body).toEqual({
      $schema: "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
      name: "127.0.0.1/weather",
      version: "2.1.0",
      description: "Forecasts for any city",
      title: "Weather",
      websiteUrl: "https://weather.example.com",
      icons: [{ src: "https://weather.example.com/icon.png", mimeType: "image/png" }],
      remotes: [
        {
          type: "streamable-http",
          url: mounted.url,
          supportedProtocolVersions: [...SUPPORTED_VERSIONS],
        },
      ],
    });
    expect(body).not.toHaveProperty("tools");
  });

  it("should carry the text's CORS and caching headers and a strong ETag", async () => {
    const response = await get(card, { origin: "https://elsewhere.example" });
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toBe("GET");
    expect(response.headers.get("access-control-allow-headers")).toBe(
      "Content-Type, If-None-Match",
    );
    expect(response.headers.get("access-control-expose-headers")).toBe("ETag");
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(response.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  });

  it("should answer 304 without a body when If-None-Match names the ETag, 200 when it does not", async () => {
    const etag = (await get(card)).headers.get("etag")!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"stale", ${etag}`, "*"]) {
      const revalidated = await get(card, { "if-none-match": ifNoneMatch });
      expect(revalidated.status, ifNoneMatch).toBe(304);
      expect(revalidated.text).toBe("");
      expect(revalidated.headers.get("etag")).toBe(etag);
      expect(revalidated.headers.get("access-control-allow-origin")).toBe("*");
    }
    const changed = await get(card, { "if-none-match": '"an-older-card"' });
    expect(changed.status).toBe(200);
    assertServerCard(json(changed));
  });

  it("should vary by Host, as the card and the catalog name the origin the request came to", async () => {
    const full = await get(card);
    const revalidated = await get(card, { "if-none-match": full.headers.get("etag")! });
    const head = await card({ method: "HEAD", headers: {} });
    const origin = new URL(mounted.url).origin;
    const catalog = await get(mounted.at(`${origin}/.well-known/ai-catalog.json`));
    for (const response of [full, revalidated, head, catalog]) {
      expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
      expect(varyOf(response)).toContain("host");
    }
  });

  it("should answer HEAD with the GET's headers, its length and no body", async () => {
    const full = await get(card);
    const head = await card({ method: "HEAD", headers: {} });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(head.headers.get("etag")).toBe(full.headers.get("etag"));
    expect(head.headers.get("content-type")).toBe("application/mcp-server-card+json");
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(full.text)));
  });

  it("should refuse other methods with 405 and Allow, and answer a preflight from any origin", async () => {
    const post = await card({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    const preflight = await card({
      method: "OPTIONS",
      headers: {
        origin: "https://elsewhere.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "if-none-match",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("If-None-Match");
  });

  it("should point the AI Catalog at the card, which answers at the entry's URL", async () => {
    const origin = new URL(mounted.url).origin;
    const catalog = await get(mounted.at(`${origin}/.well-known/ai-catalog.json`));
    expect(catalog.status).toBe(200);
    expect(catalog.headers.get("content-type")).toBe("application/ai-catalog+json");
    expect(catalog.headers.get("access-control-allow-origin")).toBe("*");
    expect(json(catalog)).toEqual({
      specVersion: "1.0",
      entries: [
        {
          identifier: "urn:air:127.0.0.1:mcp:weather",
          type: "application/mcp-server-card+json",
          url: `${mounted.url}/server-card`,
        },
      ],
    });
    const entry = (json(catalog).entries as { url: string }[])[0]!;
    expect((await get(mounted.at(entry.url))).text).toBe((await get(card)).text);
  });

  it("should serve the same card at /.well-known/mcp/server-card.json as application/json", async () => {
    const origin = new URL(mounted.url).origin;
    const alias = await get(mounted.at(`${origin}/.well-known/mcp/server-card.json`));
    expect(alias.status).toBe(200);
    expect(alias.headers.get("content-type")).toBe("application/json");
    expect(alias.text).toBe((await get(card)).text);
  });

  it("should leave the endpoint itself as it was", async () => {
    const { status, result } = await call(mounted.send, "server/discover");
    expect(status).toBe(200);
    expect(result.supportedVersions).toEqual([...SUPPORTED_VERSIONS]);
  });
});
