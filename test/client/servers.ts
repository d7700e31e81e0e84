import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import type { McpClient, McpClientOptions } from "../../src/client/index.js";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  type McpServer,
} from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { type Mounted, mount, type TransportName } from "../helpers/transports.js";

/** Our server, mounted one way, with what a client needs to reach it. */
export interface OurServer {
  server: McpServer;
  mcp: McpHandler;
  url: string;
  /** Client options that reach the mount: a fetch into the handler when it has no socket. */
  reach: Pick<McpClientOptions, "fetch" | "eraCache">;
  close(): Promise<void>;
}

/** Starts the fixture server (or `server`) through `transport`, legacy era on unless told. */
export async function startOurServer(
  transport: TransportName,
  options: {
    legacy?: boolean | { stateless?: boolean };
    server?: McpServer;
    /** Receives the method of every request the server serves. */
    seen?: string[];
    /** More handler options, such as `tasks`. */
    handler?: McpHandlerOptions;
  } = {},
): Promise<OurServer> {
  const server = options.server ?? createFixtureServer();
  const mcp = createMcpHandler(server, {
    secret: "client-tests",
    legacy: options.legacy ?? true,
    onRequest: (info) => options.seen?.push(info.method),
    ...options.handler,
  });
  const mounted: Mounted = await mount(transport, mcp);
  const reach: OurServer["reach"] = { eraCache: new Map() };
  if (transport === "fetch") reach.fetch = (input, init) => mcp.fetch(new Request(input, init));
  return { server, mcp, url: mounted.url, reach, close: () => mounted.close() };
}

/** One HTTP request a watched server saw. */
export interface SeenRequest {
  method: string;
  session?: string;
  lastEventId?: string;
}

/** Our server on a real socket, recording each HTTP request and holding its GET streams. */
export interface WatchedServer extends OurServer {
  requests: SeenRequest[];
  getStreams: Set<ServerResponse>;
  /** The open `subscriptions/listen` response streams (modern era). */
  listenStreams: Set<ServerResponse>;
}

/** Starts the fixture server on node:http (on `port`, or any) with every request recorded. */
export async function startWatchedServer(
  options: { legacy?: boolean | { stateless?: boolean; retryMs?: number }; port?: number } = {},
): Promise<WatchedServer> {
  const server = createFixtureServer();
  // Closes its POST stream early (2025-11-25 polling), then answers: the client must resume.
  server.tool({ name: "detach" }, async (_args, ctx) => {
    ctx.closeStream();
    // Answers after a while, so the client has to resume to hear it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await ctx.log("info", "while detached");
    return "answered after the stream closed";
  });
  const mcp = createMcpHandler(server, { secret: "client-tests", legacy: options.legacy ?? true });
  const handle = toNodeHandler(mcp);
  const requests: SeenRequest[] = [];
  const getStreams = new Set<ServerResponse>();
  const listenStreams = new Set<ServerResponse>();
  const http = createServer((req, res) => {
    const seen: SeenRequest = { method: req.method ?? "" };
    const session = req.headers["mcp-session-id"];
    if (typeof session === "string") seen.session = session;
    const lastEventId = req.headers["last-event-id"];
    if (typeof lastEventId === "string") seen.lastEventId = lastEventId;
    requests.push(seen);
    if (req.method === "GET") {
      getStreams.add(res);
      res.once("close", () => getStreams.delete(res));
    }
    if (req.headers["mcp-method"] === "subscriptions/listen") {
      listenStreams.add(res);
      res.once("close", () => listenStreams.delete(res));
    }
    void handle(req, res);
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, "127.0.0.1", resolve));
  return {
    server,
    mcp,
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    reach: { eraCache: new Map() },
    requests,
    getStreams,
    listenStreams,
    close: async () => {
      await mcp.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Calls `tool` and aborts it with `reason` at its first progress notification. */
export function callAndAbortOnProgress(client: McpClient, tool: string, reason: string) {
  const controller = new AbortController();
  return client.callTool(
    tool,
    {},
    { signal: controller.signal, onProgress: () => controller.abort(new Error(reason)) },
  );
}
