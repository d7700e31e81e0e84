import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type * as ClientModule from "../../src/client/index.js";
import { parseSse } from "./modern.js";
import { assertLegacyMessage, assertModernMessage } from "./spec.js";

// A page for the browser tests: served from its own loopback origin, it imports the package's
// client bundled for the browser (esbuild, as an app's bundler would) and keeps a copy of every
// response the client read, so the test can validate what the server sent.

const CLIENT_ENTRY = fileURLToPath(new URL("../../src/client/index.ts", import.meta.url));

/**
 * `src/client/index.ts` bundled for browsers (ESM). esbuild fails on any Node built-in the
 * client would pull in (`platform: "browser"` leaves none to resolve), so this is also the check
 * that the client is browser-safe.
 */
export async function bundleClient(): Promise<string> {
  const result = await build({
    entryPoints: [CLIENT_ENTRY],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/**
 * The page's own script: `window.mcp` is the client module, `window.capturingFetch` a fetch
 * that records each response's status, session header (as the page can read it) and body text
 * (streams as they arrive) in `window.captured`, and `window.ready` says the module loaded.
 */
const PAGE_SCRIPT = `
import * as mcp from "/client.js";
window.mcp = mcp;
window.captured = [];
window.changes = [];
window.results = {};
window.capturingFetch = async (input, init = {}) => {
  const response = await fetch(input, init);
  const entry = {
    httpMethod: init.method ?? "GET",
    request: typeof init.body === "string" ? init.body : null,
    status: response.status,
    contentType: response.headers.get("content-type"),
    sessionId: response.headers.get("mcp-session-id"),
    text: "",
  };
  window.captured.push(entry);
  if (!response.body || [204, 205, 304].includes(response.status)) return response;
  const [mine, theirs] = response.body.tee();
  (async () => {
    const reader = mine.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      entry.text += value;
    }
  })().catch(() => {});
  return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
};
window.ready = true;
`;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>mcp-mount browser test</title></head><body><script type="module">${PAGE_SCRIPT}</script></body></html>`;

/** A page server on its own loopback origin. */
export interface PageServer {
  /** e.g. `http://127.0.0.1:41234`; the page is at `origin + "/"`. */
  origin: string;
  close(): Promise<void>;
}

/** Serves the test page and the client bundle from a fresh loopback port. */
export async function servePage(bundle: string): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/client.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      res.end(bundle);
    } else if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(PAGE);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A response the page's client read, as `window.captured` holds it. */
export interface CapturedResponse {
  httpMethod: string;
  /** The request body the page sent (a JSON-RPC message), or null for a GET. */
  request: string | null;
  status: number;
  contentType: string | null;
  /** `Mcp-Session-Id` as the page could read it (null unless the server exposes it). */
  sessionId: string | null;
  /** The body as far as it was read. */
  text: string;
}

/**
 * Validates every message of every captured response against the MCP schema of its era:
 * modern when the request carried a modern `_meta`, else legacy (a GET stream's messages are
 * legacy). Returns how many messages were checked.
 */
export function assertCapturedMessages(captured: CapturedResponse[]): number {
  let checked = 0;
  for (const entry of captured) {
    const sent = entry.request === null ? undefined : JSON.parse(entry.request);
    const method: string = sent?.method ?? "";
    const modern = sent?.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== undefined;
    const messages = entry.contentType?.startsWith("text/event-stream")
      ? parseSse(entry.text)
      : entry.text === ""
        ? []
        : [JSON.parse(entry.text)];
    for (const message of messages) {
      if (modern) assertModernMessage(message, method);
      else assertLegacyMessage(message, method);
      checked++;
    }
  }
  return checked;
}

/**
 * What the page keeps on `window`: the client module, the capturing fetch and what it captured,
 * and whatever a test's `page.evaluate` leaves there for later calls to read. Cast `window` to
 * it inside `page.evaluate` (a type only: nothing from the test's scope reaches the page).
 */
export interface PageWindow {
  mcp: typeof ClientModule;
  capturingFetch: typeof fetch;
  captured: CapturedResponse[];
  ready?: boolean;
  /** Notification methods a listen loop received. */
  changes: string[];
  client?: ClientModule.McpClient;
  subscription?: ClientModule.Subscription;
  results: Record<string, unknown>;
}
