// The Server Card read by a page on another origin in a real browser (headless Chromium): CORS
// as the browser enforces it, whatever allowedOrigins says, and revalidation with the ETag.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, type McpHandler, McpServer } from "../../src/index.js";
import { launchChromium } from "../helpers/browser.js";
import { assertServerCard } from "../helpers/server-card-schema.js";

/** What the endpoint's server saw of one request, and how it answered. */
interface Seen {
  method: string;
  path: string;
  ifNoneMatch: string | undefined;
  status: number;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

let browser: Browser;
let pageServer: Server;
let pageOrigin: string;
let endpointServer: Server;
let endpointOrigin: string;
let mcp: McpHandler;
const seen: Seen[] = [];

beforeAll(async () => {
  pageServer = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>a page on another origin</title>");
  });
  // The MCP endpoint admits pages of one other site only; the card is public all the same.
  mcp = createMcpHandler(new McpServer({ name: "weather", version: "1.0.0" }), {
    allowedOrigins: ["https://app.example.com"],
  });
  const handle = toNodeHandler(mcp);
  endpointServer = createServer((req, res) => {
    res.once("finish", () =>
      seen.push({
        method: req.method ?? "",
        path: req.url ?? "",
        ifNoneMatch: req.headers["if-none-match"],
        status: res.statusCode,
      }),
    );
    void handle(req, res);
  });
  [browser, pageOrigin, endpointOrigin] = await Promise.all([
    launchChromium(),
    listen(pageServer),
    listen(endpointServer),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  await Promise.all([
    pageServer && closeServer(pageServer),
    endpointServer && closeServer(endpointServer),
  ]);
});

async function openPage(): Promise<Page> {
  const tab = await browser.newPage();
  await tab.goto(`${pageOrigin}/`);
  return tab;
}

describe("a page on another origin in Chromium reading the Server Card", () => {
  it("should read the card and its ETag, then get 304 sending the ETag in If-None-Match", async () => {
    const tab = await openPage();
    const url = `${endpointOrigin}/mcp/server-card`;
    const result = await tab.evaluate(async (cardUrl) => {
      const first = await fetch(cardUrl, {
        headers: { accept: "application/mcp-server-card+json" },
      });
      const etag = first.headers.get("etag");
      const card = await first.json();
      // A header the page sets: preflighted, and the 304 reaches the page as it is.
      const second = await fetch(cardUrl, { headers: { "if-none-match": etag ?? "" } });
      return {
        status: first.status,
        etag,
        card,
        revalidated: second.status,
        again: second.headers.get("etag"),
      };
    }, url);
    expect(result.status).toBe(200);
    expect(result.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    assertServerCard(result.card);
    expect(result.card.remotes[0].url).toBe(`${endpointOrigin}/mcp`);
    expect(result.revalidated).toBe(304);
    expect(result.again).toBe(result.etag);
    const card = seen.filter((request) => request.path === "/mcp/server-card");
    expect(card.map(({ method, status }) => `${method} ${status}`)).toEqual([
      "GET 200",
      "OPTIONS 204",
      "GET 304",
    ]);
    expect(card[2]!.ifNoneMatch).toBe(result.etag);
    await tab.close();
  });

  it("should revalidate its own cached copy with If-None-Match and get the body from its cache", async () => {
    const tab = await openPage();
    const url = `${endpointOrigin}/.well-known/ai-catalog.json`;
    seen.length = 0;
    const result = await tab.evaluate(async (catalogUrl) => {
      const first = await (await fetch(catalogUrl)).text();
      // no-cache: the browser must ask the server, sending the ETag of the copy it keeps.
      const again = await fetch(catalogUrl, { cache: "no-cache" });
      return { first, status: again.status, text: await again.text() };
    }, url);
    expect(result.status).toBe(200);
    expect(result.text).toBe(result.first);
    expect(JSON.parse(result.text).entries[0].url).toBe(`${endpointOrigin}/mcp/server-card`);
    expect(seen.map(({ method, status }) => `${method} ${status}`)).toEqual(["GET 200", "GET 304"]);
    expect(seen[1]!.ifNoneMatch).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    await tab.close();
  });

  it("should still keep the page from the MCP endpoint itself, whose allowedOrigins it is not in", async () => {
    const tab = await openPage();
    const outcome = await tab.evaluate(async (endpointUrl) => {
      try {
        await fetch(endpointUrl, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover" }),
        });
        return "read";
      } catch {
        return "blocked";
      }
    }, `${endpointOrigin}/mcp`);
    expect(outcome).toBe("blocked");
    await tab.close();
  });
});
