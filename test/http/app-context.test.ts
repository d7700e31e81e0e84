import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toNodeHandler } from "../../src/adapters/node.js";
import { appAuth, jwtAuth } from "../../src/auth/index.js";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
  type RequestInfo,
} from "../../src/index.js";
import { legacyCall, legacyHeaders, openSession, readLegacy } from "../helpers/legacy.js";
import {
  call,
  modernHeaders,
  modernMeta,
  readExchange,
  type Send,
  viaFetch,
  viaUrl,
} from "../helpers/modern.js";

const TASK_CAPABILITIES = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** What the test app derives from each request: a user from a header, and a request id. */
interface App {
  user: string | undefined;
  requestId: string | null;
}

const TRANSPORTS = ["fetch", "node", "express"] as const;

function appServer(): McpServer<App> {
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

let contextCalls = 0;
async function context(header: (name: string) => string | null | undefined): Promise<App> {
  contextCalls++;
  await Promise.resolve();
  if (header("x-fail") !== null && header("x-fail") !== undefined)
    throw new Error("the session store is down");
  return { user: header("x-user") ?? undefined, requestId: header("x-request-id") ?? null };
}

interface Mounted {
  mcp: McpHandler<App>;
  send: Send;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Mounts a handler with the app context taken from request headers, through `transport`. */
async function mountWithContext(
  transport: (typeof TRANSPORTS)[number],
  options: McpHandlerOptions<App>,
): Promise<Mounted> {
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

const as = (user: string, extra: Record<string, string> = {}) => ({ "x-user": user, ...extra });

describe.each(TRANSPORTS)("the app's context per request (%s)", (transport) => {
  let mounted: Mounted;
  const requests: RequestInfo<App>[] = [];
  const errors: { error: unknown; app?: App }[] = [];
  beforeAll(async () => {
    mounted = await mountWithContext(transport, {
      onRequest: (info) => requests.push(info),
      onError: (error, { app }) => errors.push({ error, app }),
    });
  });
  afterAll(() => mounted.close());

  it("should reach tools in both eras, computed once per HTTP request", async () => {
    const before = contextCalls;
    const modern = await call(
      mounted.send,
      "tools/call",
      { name: "whoami", arguments: {} },
      {
        headers: as("ada", { "x-request-id": "r-1" }),
      },
    );
    expect(modern.result.structuredContent).toEqual({
      user: "ada",
      requestId: "r-1",
      principal: null,
    });
    expect(contextCalls - before).toBe(1);
    const session = await openSession(mounted.send);
    const legacy = await legacyCall(
      mounted.send,
      session,
      "tools/call",
      { name: "whoami", arguments: {} },
      as("bob"),
    );
    expect(legacy.result.structuredContent).toMatchObject({ user: "bob" });
  });

  it("should reach prompts, resources, templates and completions", async () => {
    const headers = as("ada");
    const prompt = await call(
      mounted.send,
      "prompts/get",
      { name: "greet", arguments: {} },
      { headers },
    );
    expect(JSON.stringify(prompt.result)).toContain("Hello ada");
    const resource = await call(mounted.send, "resources/read", { uri: "app://me" }, { headers });
    expect(resource.result.contents).toEqual([{ uri: "app://me", text: "me=ada" }]);
    const template = await call(
      mounted.send,
      "resources/read",
      { uri: "app://users/eve" },
      { headers },
    );
    expect(template.result.contents).toEqual([{ uri: "app://users/eve", text: "eve seen by ada" }]);
    const completion = await call(
      mounted.send,
      "completion/complete",
      {
        ref: { type: "ref/resource", uri: "app://users/{name}" },
        argument: { name: "name", value: "e" },
      },
      { headers },
    );
    expect(completion.result.completion).toMatchObject({ values: ["ada-e"] });
  });

  it("should be computed again for a multi round-trip retry, carrying nothing over", async () => {
    const first = await call(
      mounted.send,
      "tools/call",
      { name: "ask", arguments: {} },
      {
        capabilities: { elicitation: {} },
        headers: as("ada", { "x-request-id": "round-1" }),
      },
    );
    expect(first.result.resultType).toBe("input_required");
    const retry = await call(
      mounted.send,
      "tools/call",
      {
        name: "ask",
        arguments: {},
        inputResponses: { ok: { action: "accept", content: {} } },
        requestState: first.result.requestState,
      },
      { capabilities: { elicitation: {} }, headers: as("ada", { "x-request-id": "round-2" }) },
    );
    expect(retry.result.structuredContent).toEqual({ action: "accept", requestId: "round-2" });
  });

  it("should reach a task's work", async () => {
    const started = await call(
      mounted.send,
      "tools/call",
      { name: "job", arguments: {} },
      {
        capabilities: TASK_CAPABILITIES,
        headers: as("ada"),
      },
    );
    expect(started.result.resultType).toBe("task");
    const taskId = started.result.taskId as string;
    await expect
      .poll(async () => {
        const polled = await call(
          mounted.send,
          "tasks/get",
          { taskId },
          {
            capabilities: TASK_CAPABILITIES,
            headers: as("ada", { "mcp-name": taskId }),
          },
        );
        return (polled.result as { result?: { structuredContent?: unknown } }).result
          ?.structuredContent;
      })
      .toEqual({ user: "ada" });
  });

  it("should reach the onRequest and onError hooks", async () => {
    requests.length = 0;
    errors.length = 0;
    const failed = await call(
      mounted.send,
      "tools/call",
      { name: "fails", arguments: {} },
      {
        headers: as("mallory", { "x-request-id": "r-err" }),
      },
    );
    expect(failed.result.isError).toBe(true);
    await expect
      .poll(() => requests.find((info) => info.name === "fails")?.app)
      .toEqual({
        user: "mallory",
        requestId: "r-err",
      });
    expect(errors.map(({ error, app }) => [String(error), app?.user])).toContainEqual([
      "Error: failed for mallory",
      "mallory",
    ]);
  });

  it("should answer 500 with a JSON-RPC body when the context throws, and report it", async () => {
    errors.length = 0;
    const response = await mounted.send({
      method: "POST",
      headers: { ...modernHeaders("tools/list"), "x-fail": "1" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: modernMeta() },
      }),
    });
    const { status, error } = readExchange(response, "tools/list");
    expect(status).toBe(500);
    expect(error).toEqual({ code: -32603, message: "Internal error" });
    expect(errors.map(({ error }) => String(error))).toEqual(["Error: the session store is down"]);
  });
});

describe.each(TRANSPORTS)("the app's login as the principal: appAuth (%s)", (transport) => {
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mountWithContext(transport, {
      auth: appAuth<App>(
        (_req, app) =>
          app.user
            ? { subject: app.user, scopes: app.user === "root" ? ["admin"] : [] }
            : undefined,
        {
          unauthenticated: { message: "Sign in at /login first", headers: { "x-login": "/login" } },
        },
      ),
    });
  });
  afterAll(() => mounted.close());

  it("should answer an anonymous caller 401 as the app shaped it", async () => {
    const { status, error, headers } = await call(mounted.send, "tools/list");
    expect(status).toBe(401);
    expect(error).toEqual({ code: -32600, message: "Sign in at /login first" });
    expect(headers.get("x-login")).toBe("/login");
    expect(headers.get("www-authenticate")).toBeNull();
  });

  it("should make the user the principal, with its scopes applied per tool", async () => {
    const ada = await call(
      mounted.send,
      "tools/call",
      { name: "whoami", arguments: {} },
      { headers: as("ada") },
    );
    expect(ada.result.structuredContent).toMatchObject({ user: "ada", principal: "ada" });
    const denied = await call(
      mounted.send,
      "tools/call",
      { name: "admin_only", arguments: {} },
      {
        headers: as("ada"),
      },
    );
    expect(denied.status).toBe(403);
    expect(denied.error?.message).toBe("Insufficient scope: needs admin");
    const root = await call(
      mounted.send,
      "tools/call",
      { name: "admin_only", arguments: {} },
      {
        headers: as("root"),
      },
    );
    expect(root.status).toBe(200);
  });

  it("should bind legacy sessions to the user: another one gets 'Session not found'", async () => {
    const send =
      (user: string): Send =>
      (request) =>
        mounted.send({ ...request, headers: { ...request.headers, ...as(user) } });
    const session = await openSession(send("ada"));
    const mine = await legacyCall(send("ada"), session, "tools/call", {
      name: "whoami",
      arguments: {},
    });
    expect(mine.result.structuredContent).toMatchObject({ user: "ada" });
    const theirs = await send("bob")({
      method: "POST",
      headers: legacyHeaders(session),
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
    });
    const exchange = readLegacy(theirs, "tools/list");
    expect(exchange.status).toBe(404);
    expect(exchange.error?.message).toBe("Session not found");
  });

  it("should bind multi round-trip state and tasks to the user", async () => {
    const first = await call(
      mounted.send,
      "tools/call",
      { name: "ask", arguments: {} },
      {
        capabilities: { elicitation: {} },
        headers: as("ada"),
      },
    );
    const stolen = await call(
      mounted.send,
      "tools/call",
      {
        name: "ask",
        arguments: {},
        inputResponses: { ok: { action: "accept", content: {} } },
        requestState: first.result.requestState,
      },
      { capabilities: { elicitation: {} }, headers: as("bob") },
    );
    expect(stolen.error?.code).toBe(-32602);
    const task = await call(
      mounted.send,
      "tools/call",
      { name: "job", arguments: {} },
      {
        capabilities: TASK_CAPABILITIES,
        headers: as("ada"),
      },
    );
    const taskId = task.result.taskId as string;
    const other = await call(
      mounted.send,
      "tasks/get",
      { taskId },
      {
        capabilities: TASK_CAPABILITIES,
        headers: as("bob", { "mcp-name": taskId }),
      },
    );
    expect(other.error?.message).toMatch(/not found/i);
    const own = await call(
      mounted.send,
      "tasks/get",
      { taskId },
      {
        capabilities: TASK_CAPABILITIES,
        headers: as("ada", { "mcp-name": taskId }),
      },
    );
    expect(own.error).toBeUndefined();
  });

  it("should serve no OAuth metadata without a bearer layer", async () => {
    const response = await mounted.mcp.fetch(
      new Request("http://127.0.0.1/.well-known/oauth-protected-resource/mcp"),
    );
    expect(response.status).toBe(404);
  });
});

describe("appAuth composed with bearer tokens (fetch)", () => {
  const secret = "k".repeat(32);
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mountWithContext("fetch", {
      auth: appAuth<App>((_req, app) => (app.user ? { subject: app.user } : undefined), {
        bearer: jwtAuth({
          issuer: "https://auth.example.com",
          secret,
          resource: "http://127.0.0.1/mcp",
        }),
      }),
    });
  });
  afterAll(() => mounted.close());

  it("should judge a request carrying a bearer token by the token alone, first", async () => {
    const { status, error, headers } = await call(
      mounted.send,
      "tools/list",
      {},
      {
        headers: { ...as("ada"), authorization: "Bearer not-a-jwt" },
      },
    );
    expect(status).toBe(401);
    expect(error?.message).toMatch(/^Invalid access token/);
    expect(headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("should take the app's user when no token is sent, and challenge for one when neither", async () => {
    const ada = await call(
      mounted.send,
      "tools/call",
      { name: "whoami", arguments: {} },
      { headers: as("ada") },
    );
    expect(ada.result.structuredContent).toMatchObject({ principal: "ada" });
    const nobody = await call(mounted.send, "tools/list");
    expect(nobody.status).toBe(401);
    expect(nobody.headers.get("www-authenticate")).toContain("resource_metadata=");
  });
});
