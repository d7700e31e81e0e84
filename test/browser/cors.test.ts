// A real browser (headless Chromium) on one loopback origin, the package's client bundled for it,
// and an mcp-mount endpoint on another origin behind bearer auth: CORS as browsers enforce it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import { jwtAuth } from "../../src/auth/index.js";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { launchChromium } from "../helpers/browser.js";
import {
  assertCapturedMessages,
  bundleClient,
  type CapturedResponse,
  type PageServer,
  type PageWindow,
  servePage,
} from "../helpers/browser-page.js";
import { createFixtureServer } from "../helpers/fixture-server.js";

/** What the endpoint's server saw of one HTTP request, and how it answered. */
interface Seen {
  method: string;
  origin: string | undefined;
  status: number;
  sessionId: string | undefined;
}

let browser: Browser;
let issuer: LocalIssuer;
let page: PageServer;
let evilPage: PageServer;
let endpoint: { url: string; mcp: McpHandler; seen: Seen[]; close(): Promise<void> };

/** The endpoint on its own loopback port, allowing the page's origin only. */
async function startEndpoint(allowed: string): Promise<typeof endpoint> {
  const seen: Seen[] = [];
  let url = "";
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const fixture = createFixtureServer();
  fixture.tool({ name: "whoami" }, (_args, ctx) => ({ subject: ctx.auth?.subject ?? null }));
  const mcp = createMcpHandler(fixture, {
    secret: "browser-tests",
    allowedOrigins: [allowed],
    auth: jwtAuth({ issuer: issuer.url, jwksUrl: issuer.jwksUrl, resource: url }),
  });
  const handle = toNodeHandler(mcp);
  server.on("request", (req, res) => {
    res.once("finish", () =>
      seen.push({
        method: req.method ?? "",
        origin: req.headers.origin,
        status: res.statusCode,
        sessionId: req.headers["mcp-session-id"] as string | undefined,
      }),
    );
    void handle(req, res);
  });
  return {
    url,
    mcp,
    seen,
    close: async () => {
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Opens the page at `origin` and waits until its module (and so the client bundle) loaded. */
async function openPage(origin: string): Promise<Page> {
  const tab = await browser.newPage();
  const errors: string[] = [];
  tab.on("pageerror", (error) => errors.push(error.message));
  await tab.goto(`${origin}/`);
  await tab.waitForFunction(() => (window as unknown as PageWindow).ready === true);
  expect(errors).toEqual([]);
  return tab;
}

function captured(tab: Page): Promise<CapturedResponse[]> {
  return tab.evaluate(() => (window as unknown as PageWindow).captured);
}

/** What the page's tests left in `window.results`. */
function results(tab: Page): Promise<Record<string, unknown>> {
  return tab.evaluate(() => (window as unknown as PageWindow).results);
}

/** Resolves once the page's listen loop received a notification. */
async function changesOf(tab: Page): Promise<string[]> {
  await tab.waitForFunction(() => (window as unknown as PageWindow).changes.length > 0);
  return tab.evaluate(() => (window as unknown as PageWindow).changes);
}

beforeAll(async () => {
  const bundle = await bundleClient();
  [browser, issuer, page, evilPage] = await Promise.all([
    launchChromium(),
    startLocalIssuer(),
    servePage(bundle),
    servePage(bundle),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([issuer?.close(), page?.close(), evilPage?.close()]);
});

describe("a page on another origin, in Chromium, with the bundled client", () => {
  let tab: Page;
  let token: string;
  beforeEach(async () => {
    endpoint = await startEndpoint(page.origin);
    token = await issuer.sign({ sub: "page-user", aud: endpoint.url });
    tab = await openPage(page.origin);
  });
  afterEach(async () => {
    await tab.close();
    await endpoint.close();
  });

  it("should list tools, call one with a bearer token, mirror an Mcp-Param header and finish an MRTR elicitation", async () => {
    const outcome = await tab.evaluate(
      async ({ url, token }) => {
        const w = window as unknown as PageWindow;
        const client = await w.mcp.McpClient.connect(url, {
          era: "modern",
          headers: { authorization: `Bearer ${token}` },
          fetch: w.capturingFetch,
          onInput: { elicitation: async () => ({ action: "accept", content: { ok: true } }) },
        });
        const tools = (await client.tools()).map((tool) => tool.name);
        const whoami = await client.callTool("whoami", {});
        const regional = await client.callTool("regional", { region: "eu", count: 3, query: "q" });
        const confirm = await client.callTool("confirm", { item: "draft" });
        await client.close();
        return {
          era: client.era,
          tools,
          whoami: whoami.structuredContent,
          regional: regional.content,
          confirm: confirm.structuredContent,
        };
      },
      { url: endpoint.url, token },
    );
    expect(outcome.era).toBe("modern");
    expect(outcome.tools).toEqual(
      expect.arrayContaining(["echo", "confirm", "regional", "whoami"]),
    );
    expect(outcome.whoami).toEqual({ subject: "page-user" });
    expect(outcome.regional).toEqual([{ type: "text", text: "eu:3:q" }]);
    // Asked once, answered on the retry: the handler ran twice.
    expect(outcome.confirm).toEqual({ action: "accept", content: { ok: true }, rounds: 2 });
    const responses = await captured(tab);
    const rounds = responses.filter((entry) => entry.request?.includes('"confirm"'));
    expect(rounds.map((entry) => JSON.parse(entry.text).result.resultType)).toEqual([
      "input_required",
      "complete",
    ]);
    expect(assertCapturedMessages(responses)).toBeGreaterThanOrEqual(5);
    // Preflights were answered (before auth), and the browser then sent the calls.
    const preflights = endpoint.seen.filter((seen) => seen.method === "OPTIONS");
    expect(preflights.length).toBeGreaterThan(0);
    expect(preflights.every((seen) => seen.status === 204 && seen.origin === page.origin)).toBe(
      true,
    );
  });

  it("should receive a list change on a subscriptions/listen stream", async () => {
    const acknowledged = await tab.evaluate(
      async ({ url, token }) => {
        const w = window as unknown as PageWindow;
        const client = await w.mcp.McpClient.connect(url, {
          era: "modern",
          headers: { authorization: `Bearer ${token}` },
          fetch: w.capturingFetch,
        });
        const subscription = client.listen({ toolsListChanged: true });
        w.client = client;
        void (async () => {
          for await (const change of subscription) w.changes.push(change.method);
        })();
        return subscription.acknowledged;
      },
      { url: endpoint.url, token },
    );
    expect(acknowledged).toEqual({ toolsListChanged: true });
    endpoint.mcp.server.tool({ name: "added_later" }, () => "new");
    expect(await changesOf(tab)).toEqual(["notifications/tools/list_changed"]);
    const streamText = async () =>
      (await captured(tab)).find((entry) => entry.request?.includes("subscriptions/listen"))
        ?.text ?? "";
    await expect.poll(streamText).toContain("list_changed");
    expect(assertCapturedMessages(await captured(tab))).toBeGreaterThanOrEqual(3);
    await tab.evaluate(() => (window as unknown as PageWindow).client?.close());
  });

  it("should run a legacy session: the session id read from the exposed header, a notification on the GET stream", async () => {
    await tab.evaluate(
      async ({ url, token }) => {
        const w = window as unknown as PageWindow;
        const client = await w.mcp.McpClient.connect(url, {
          era: "legacy",
          headers: { authorization: `Bearer ${token}` },
          fetch: w.capturingFetch,
          onInput: { elicitation: async () => ({ action: "accept", content: { ok: true } }) },
        });
        w.client = client;
        const subscription = client.listen({ toolsListChanged: true });
        void (async () => {
          for await (const change of subscription) w.changes.push(change.method);
        })();
        await subscription.acknowledged;
        w.results.era = client.era;
        w.results.whoami = (await client.callTool("whoami", {})).structuredContent;
        w.results.confirm = (await client.callTool("confirm", { item: "x" })).structuredContent;
      },
      { url: endpoint.url, token },
    );
    const outcome = await results(tab);
    expect(outcome.era).toBe("legacy");
    expect(outcome.whoami).toEqual({ subject: "page-user" });
    // In a legacy session the elicitation is a server request on the call's SSE stream.
    expect(outcome.confirm).toMatchObject({ action: "accept", content: { ok: true } });
    const initialize = (await captured(tab)).find((entry) =>
      entry.request?.includes('"initialize"'),
    );
    expect(initialize?.sessionId).toMatch(/^[\x21-\x7e]+$/);
    // Every later request carried it, so the client read it from the exposed header.
    const later = endpoint.seen.filter(
      (seen) => seen.method !== "OPTIONS" && seen.origin === page.origin && seen.sessionId,
    );
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((seen) => seen.sessionId === initialize?.sessionId)).toBe(true);
    // The session's GET stream is open: a change reaches the page on it.
    await expect.poll(() => endpoint.mcp.stats().streams).toBe(1);
    endpoint.mcp.server.tool({ name: "added_for_legacy" }, () => "new");
    expect(await changesOf(tab)).toEqual(["notifications/tools/list_changed"]);
    const getStream = async () => (await captured(tab)).find((entry) => entry.httpMethod === "GET");
    expect((await getStream())?.status).toBe(200);
    await expect.poll(async () => (await getStream())?.text).toContain("list_changed");
    expect(assertCapturedMessages(await captured(tab))).toBeGreaterThanOrEqual(4);
    await tab.evaluate(() => (window as unknown as PageWindow).client?.close());
    await expect
      .poll(() => endpoint.seen.find((seen) => seen.method === "DELETE")?.status)
      .toBe(200);
  });

  it("should be refused from an origin not on the list: the browser's fetch rejects, the server answered 403", async () => {
    const evil = await openPage(evilPage.origin);
    try {
      const outcome = await evil.evaluate(
        async ({ url, token }) => {
          const errorOf = (promise: Promise<unknown>) =>
            promise.then(
              () => "resolved",
              (error: Error) => error.name,
            );
          const w = window as unknown as PageWindow;
          return {
            // A JSON POST needs a preflight, which the server refuses: nothing is sent.
            client: await errorOf(
              w.mcp.McpClient.connect(url, {
                era: "modern",
                headers: { authorization: `Bearer ${token}` },
              }),
            ),
            // A "simple" request skips the preflight: sent, answered 403, unreadable.
            simple: await errorOf(
              fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }),
            ),
          };
        },
        { url: endpoint.url, token },
      );
      expect(outcome.client).not.toBe("resolved");
      expect(outcome.simple).toBe("TypeError");
      const fromEvil = endpoint.seen.filter((seen) => seen.origin === evilPage.origin);
      expect(fromEvil).toContainEqual(expect.objectContaining({ method: "OPTIONS", status: 403 }));
      expect(fromEvil).toContainEqual(expect.objectContaining({ method: "POST", status: 403 }));
      // Only the simple request got past the browser: no JSON-RPC POST reached the endpoint.
      expect(fromEvil.filter((seen) => seen.method === "POST")).toHaveLength(1);
    } finally {
      await evil.close();
    }
  });
});
