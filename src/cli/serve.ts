import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../adapters/node.js";
import { jwtAuth } from "../auth/jwt.js";
import { nodeFetch } from "../client/node-fetch.js";
import { proxyServer } from "../gateway/index.js";
import type { Upstream } from "../gateway/types.js";
import { httpUpstream, stdioUpstream } from "../gateway/upstream/index.js";
import { createMcpHandler, type McpHandler } from "../http/handler.js";
import type { McpHandlerOptions } from "../http/handler-options.js";
import type { ServeOptions } from "./serve-options.js";
import { connectStore, type SharedStore } from "./serve-store.js";
import { printMessage, printOutput } from "./terminal.js";

/** What the process may take beyond the grace to write the last answers and close sockets. */
const FLUSH_MS = 2_000;

/**
 * `mcp-mount serve`: the upstream behind `proxyServer`, mounted with `createMcpHandler` on
 * node:http, readiness at `/healthz`, until SIGTERM or SIGINT drains it (the endpoint first,
 * then the upstream) and the promise resolves with the exit code.
 */
export async function serve(options: ServeOptions): Promise<number> {
  const shared = options.redis ? await connectStore(options.redis) : undefined;
  const upstream = toUpstream(options);
  let mcp: McpHandler | undefined;
  const http = createServer();
  let url: string;
  try {
    mcp = createMcpHandler(await proxyServer(upstream), handlerOptions(options, shared));
    // Once it hears other processes' changes, so a list change published from now on is heard.
    await mcp.ready;
    http.on("request", listener(options.path, mcp));
    url = await listen(http, options);
  } catch (error) {
    // A start that failed (a port in use) stops what it started: the upstream child's pipes
    // would otherwise keep the process up, never answering.
    await mcp?.close({ graceMs: 0 }).catch(report);
    await upstream.close(0);
    await shared?.close();
    throw error;
  }
  // Tests and scripts wait for this line; it names the port chosen when --port is 0.
  printOutput({ text: `mcp-mount serve listening on ${url}` });
  await signalled();
  printMessage(`mcp-mount serve: draining (up to ${options.graceMs} ms)`);
  // A last resort only: the drain answers every request within the grace.
  setTimeout(() => process.exit(1), 2 * options.graceMs + 2 * FLUSH_MS).unref();
  await mcp.close({ graceMs: options.graceMs }).catch(report);
  await upstream.close(options.graceMs).catch(report);
  await closeHttp(http);
  await shared?.close();
  // Whatever a library left behind (a timer, a socket) must not keep a drained process up.
  setTimeout(() => process.exit(0), FLUSH_MS).unref();
  return 0;
}

function toUpstream(options: ServeOptions): Upstream {
  const { upstream, scope, maxConcurrency } = options;
  const limits = maxConcurrency === undefined ? {} : { maxConcurrency };
  if (upstream.kind === "http") {
    // A Node process: the client's HTTP over node:http costs about half of fetch's CPU.
    const clientOptions = { fetch: nodeFetch() };
    return httpUpstream(upstream.url, { scope, clientOptions, ...limits });
  }
  return stdioUpstream({
    command: upstream.command,
    args: upstream.args,
    env: upstream.env,
    inheritEnv: upstream.inheritEnv,
    scope,
    ...limits,
    onStderr: (line) => printMessage(`[upstream] ${line}`),
  });
}

function handlerOptions(options: ServeOptions, shared: SharedStore | undefined): McpHandlerOptions {
  const handler: McpHandlerOptions = { onError: report };
  if (shared) handler.store = shared.store;
  const secret = process.env.MCP_SECRET;
  if (secret) handler.secret = secret;
  else if (shared) {
    printMessage(
      "warning: MCP_SECRET is not set: each process seals requestState with its own key, so a modern client's multi round-trip request fails when its retry lands on another process",
    );
  }
  if (options.auth) {
    const { issuer, jwksUrl, resource } = options.auth;
    handler.auth = jwtAuth({ issuer, jwksUrl, ...(resource ? { resource } : {}) });
  }
  if (options.origins) {
    handler.allowedOrigins = options.origins.includes("*") ? "*" : options.origins;
    handler.cors = {};
  }
  if (options.allowedHosts) handler.allowedHosts = options.allowedHosts;
  if (options.trustProxy) handler.trustProxy = true;
  if (options.rateLimit) handler.rateLimit = options.rateLimit;
  return handler;
}

/**
 * Readiness at `/healthz`; the endpoint, its Server Card and the well-known documents (OAuth
 * protected resource metadata, the AI Catalog) to the handler; anything else 404.
 */
function listener(path: string, mcp: McpHandler) {
  const handle = toNodeHandler(mcp);
  const card = `${path.replace(/\/$/, "")}/server-card`;
  return (req: IncomingMessage, res: ServerResponse) => {
    const pathname = new URL(req.url ?? "/", "http://localhost").pathname;
    if (pathname === "/healthz") {
      health(mcp, res).catch(report);
      return;
    }
    if (pathname === path || pathname === card || pathname.startsWith("/.well-known/")) {
      handle(req, res).catch((error: unknown) => {
        report(error);
        res.destroy();
      });
      return;
    }
    res
      .writeHead(404, { "content-type": "text/plain" })
      .end(`Not found: the endpoint is ${path}\n`);
  };
}

/** 200 while this process should get traffic, 503 while it drains or its store is down. */
async function health(mcp: McpHandler, res: ServerResponse): Promise<void> {
  const state = await mcp.health();
  res
    .writeHead(state.ready ? 200 : 503, {
      "content-type": "application/json",
      "cache-control": "no-store",
    })
    .end(JSON.stringify(state));
}

async function listen(http: Server, { port, host, path }: ServeOptions): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}${path}`;
}

/** Resolves on the first SIGTERM or SIGINT; a second one while draining ends the process. */
function signalled(): Promise<void> {
  return new Promise((resolve) => {
    const first = () => {
      process.off("SIGTERM", first).off("SIGINT", first);
      process.once("SIGTERM", () => process.exit(1)).once("SIGINT", () => process.exit(130));
      resolve();
    };
    process.on("SIGTERM", first).on("SIGINT", first);
  });
}

/** Stops listening; connections close once idle, and those a client holds open after a moment. */
async function closeHttp(http: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  const timer = setTimeout(() => http.closeAllConnections(), FLUSH_MS);
  await closed;
  clearTimeout(timer);
}

function report(error: unknown): void {
  printMessage(`mcp-mount serve: ${error instanceof Error ? error.message : String(error)}`);
}
