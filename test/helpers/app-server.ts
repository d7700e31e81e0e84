import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { toExpress } from "../../src/adapters/express.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
} from "../../src/index.js";
import { type Send, viaFetch, viaUrl } from "./modern.js";
import type { TransportName } from "./transports.js";

// The app-context suites' server: an app that derives a user and a request id from headers, passed
// to the handler as `context` through fetch, Node and Express.

/** The client capabilities that turn tasks on. */
export const TASK_CAPABILITIES = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** What the test app derives from each request: a user from a header, and a request id. */
export interface App {
  user: string | undefined;
  requestId: string | null;
}

/** A server whose tools, prompts and resources answer with what they saw of `ctx.app`. */
export function appServer(): McpServer<App> {
  const server = new McpServer<App>({ name: "app-context", version: "1.0.0" });
  server.tool({ name: "whoami" }, (_args, ctx) => ({
    user: ctx.app.user ?? null,
    requestId: ctx.app.requestId,
    principal: ctx.auth?.subject ?? null,
  }));
  server.tool({ name: "ask" }, async (_args, ctx) => {
    const answer = await ctx.elicit("ok", {
      message: "Sure?",
      requestedSchema: { type: "object", properties: {} },
    });
    return { action: answer.action, requestId: ctx.app.requestId };
  });
  server.tool({ name: "fails" }, (_args, ctx) => {
    throw new Error(`failed for ${ctx.app.user}`);
  });
  server.tool({ name: "admin_only", scopes: ["admin"] }, () => "admin");
  server.tool({ name: "job", taskSupport: "optional" }, async (_args, ctx) => ({
    user: ctx.app.user ?? null,
  }));
  server.prompt(
    { name: "greet", arguments: [{ name: "style" }] },
    (_args, ctx) => `Hello ${ctx.app.user}`,
  );
  server.resource({ uri: "app://me", name: "me" }, (uri, ctx) => ({
    uri,
    text: `me=${ctx.app.user}`,
  }));
  server.resourceTemplate(
    {
      uriTemplate: "app://users/{name}",
      name: "user",
      complete: { name: (value, { ctx }) => [`${ctx.app.user}-${value}`] },
    },
    (uri, { name }, ctx) => ({ uri, text: `${name} seen by ${ctx.app.user}` }),
  );
  return server;
}

/** How many times the app context was computed, across the suite (read it before and after). */
export let contextCalls = 0;

async function context(header: (name: string) => string | null | undefined): Promise<App> {
  contextCalls++;
  await Promise.resolve();
  if (header("x-fail") !== null && header("x-fail") !== undefined)
    throw new Error("the session store is down");
  return { user: header("x-user") ?? undefined, requestId: header("x-request-id") ?? null };
}

/** A handler mounted with the app context, and how to reach and close it. */
export interface AppMounted {
  mcp: McpHandler<App>;
  send: Send;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Mounts a handler with the app context taken from request headers, through `transport`. */
export async function mountWithContext(
  transport: TransportName,
  options: McpHandlerOptions<App>,
): Promise<AppMounted> {
  const mcp = createMcpHandler(appServer(), { secret: "s", ...options });
  if (transport === "fetch") {
    const send = viaFetch((request) =>
      mcp.fetch(request, { context: () => context((name) => request.headers.get(name)) }),
    );
    return { mcp, send, close: () => mcp.close() };
  }
  const server =
    transport === "node"
      ? createServer(
          toNodeHandler(mcp, { context: (req) => context((name) => header(req.headers[name])) }),
        )
      : createServer(
          express().use(
            "/mcp",
            toExpress(mcp, { context: (req) => context((name) => req.get(name) ?? null) }),
          ),
        );
  const url = await listen(server);
  return {
    mcp,
    send: viaUrl(url),
    async close() {
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function header(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/** Headers that make the request come from `user`. */
export const as = (user: string, extra: Record<string, string> = {}) => ({
  "x-user": user,
  ...extra,
});
