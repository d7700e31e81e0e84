import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appAuth, jwtAuth } from "../../src/auth/index.js";
import {
  type App,
  type AppMounted,
  as,
  mountWithContext,
  TASK_CAPABILITIES,
} from "../helpers/app-server.js";
import { legacyCall, legacyHeaders, openSession, readLegacy } from "../helpers/legacy.js";
import { call, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

describe.each(TRANSPORTS)("the app's login as the principal: appAuth (%s)", (transport) => {
  let mounted: AppMounted;
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
  let mounted: AppMounted;
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
