import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express } from "express";
// Express 4 is installed under an alias so both majors are tested against the same adapter.
import express4 from "express4";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginHandler, loginCookie, mountCookieLogin } from "../helpers/cookie-login.js";
import { legacyCall, legacyHeaders, openSession, readLegacy } from "../helpers/legacy.js";
import { call, type RawRequest, type RawResponse, type Send } from "../helpers/modern.js";

const COOKIE_SECRET = "cookie-login-tests";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const ELICITATION = { elicitation: {} };

const FRAMEWORKS: [string, () => Express][] = [
  ["Express 5", () => express()],
  ["Express 4", () => express4() as unknown as Express],
];
const TRANSPORTS = ["supertest", "a real socket"] as const;
type Transport = (typeof TRANSPORTS)[number];

/** Sends a request to one path of the app. */
type To = (path: string) => Send;

/** Through supertest, reading every body as text (JSON and SSE alike). */
function viaSupertest(app: Express): To {
  return (path) =>
    async ({ method, headers, body }: RawRequest): Promise<RawResponse> => {
      const agent = request(app);
      const test =
        method === "GET"
          ? agent.get(path)
          : method === "DELETE"
            ? agent.delete(path)
            : agent.post(path);
      test.set(headers);
      if (body !== undefined) test.send(body);
      const response = await test.buffer(true).parse((res, done) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => done(null, text));
      });
      const out = new Headers();
      for (const [name, value] of Object.entries(response.headers as Record<string, unknown>))
        for (const one of Array.isArray(value) ? value : [value]) out.append(name, String(one));
      return { status: response.status, headers: out, text: response.body as string };
    };
}

/** Through `fetch` to the app listening on a loopback port. */
async function viaSocket(app: Express): Promise<{ to: To; server: Server }> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const to: To = (path) => async (init) => {
    const response = await fetch(origin + path, init);
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return { to, server };
}

const CASES = FRAMEWORKS.flatMap(([label, createApp]) =>
  TRANSPORTS.map((transport) => [label, transport, createApp] as const),
);

describe.each(CASES)(
  "a signed-cookie login as the MCP principal (%s, %s)",
  (_label, transport: Transport, createApp) => {
    const mcp = createLoginHandler();
    let to: To;
    let server: Server | undefined;
    /** Cookies of the logged-in users. */
    const cookies: Record<string, string> = {};

    /** Sends to /mcp with `cookie`, or anonymously. */
    const as =
      (cookie?: string): Send =>
      (req) =>
        to("/mcp")(cookie === undefined ? req : { ...req, headers: { ...req.headers, cookie } });
    const user = (name: string): Send => {
      const cookie = cookies[name];
      if (cookie === undefined) throw new Error(`${name} is not logged in`);
      return as(cookie);
    };

    beforeAll(async () => {
      const app = createApp();
      mountCookieLogin(app, mcp, COOKIE_SECRET);
      if (transport === "supertest") to = viaSupertest(app);
      else ({ to, server } = await viaSocket(app));
      for (const name of ["ada", "bob", "admin"]) {
        const response = await to(`/login?user=${name}`)({ method: "POST", headers: {} });
        expect(response.status).toBe(204);
        cookies[name] = loginCookie(response.headers);
      }
    });
    afterAll(async () => {
      await mcp.close();
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    });

    it("should answer an anonymous caller 401, and one with a forged or tampered cookie too", async () => {
      const anonymous = await call(as(), "tools/list");
      expect(anonymous.status).toBe(401);
      expect(anonymous.error).toEqual({ code: -32600, message: "Sign in required" });
      expect(anonymous.headers.get("www-authenticate")).toBeNull();
      const forged = await call(as("user=admin"), "tools/list");
      expect(forged.status).toBe(401);
      // cookie-parser signs as `s:<value>.<signature>`: another value keeps a signature that fails.
      const tampered = cookies.ada!.replace("s%3Aada.", "s%3Aadmin.");
      expect(tampered).not.toBe(cookies.ada);
      expect((await call(as(tampered), "tools/list")).status).toBe(401);
    });

    it("should run a logged-in user's tools with ctx.app and ctx.auth from the cookie, in both eras", async () => {
      const modern = await call(user("ada"), "tools/call", { name: "whoami", arguments: {} });
      expect(modern.status).toBe(200);
      expect(modern.result.structuredContent).toMatchObject({ user: "ada", subject: "ada" });
      const session = await openSession(user("bob"));
      const legacy = await legacyCall(user("bob"), session, "tools/call", {
        name: "whoami",
        arguments: {},
      });
      expect(legacy.result.structuredContent).toMatchObject({ user: "bob", subject: "bob" });
    });

    it("should bind a legacy session to its user: another one gets 404 'Session not found'", async () => {
      const session = await openSession(user("ada"));
      for (const method of ["tools/list", "ping"]) {
        const stolen = await legacyCall(user("bob"), session, method);
        expect(stolen.status).toBe(404);
        expect(stolen.error?.message).toBe("Session not found");
      }
      const stream = readLegacy(
        await user("bob")({
          method: "GET",
          headers: { ...legacyHeaders(session), accept: "text/event-stream" },
        }),
        "GET",
      );
      expect(stream.status).toBe(404);
      const deleted = await user("bob")({ method: "DELETE", headers: legacyHeaders(session) });
      expect(readLegacy(deleted, "DELETE").status).toBe(404);
      expect((await legacyCall(as(), session, "ping")).status).toBe(401);
      // Still ada's, untouched by bob's attempts.
      const mine = await legacyCall(user("ada"), session, "tools/call", {
        name: "whoami",
        arguments: {},
      });
      expect(mine.status).toBe(200);
      expect(mine.result.structuredContent).toMatchObject({ user: "ada" });
    });

    it("should bind multi round-trip state to its user: another one's retry is refused with -32602", async () => {
      const first = await call(
        user("ada"),
        "tools/call",
        { name: "ask", arguments: {} },
        { capabilities: ELICITATION },
      );
      expect(first.result.resultType).toBe("input_required");
      const retry = (send: Send) =>
        call(
          send,
          "tools/call",
          {
            name: "ask",
            arguments: {},
            inputResponses: { ok: { action: "accept", content: {} } },
            requestState: first.result.requestState,
          },
          { capabilities: ELICITATION },
        );
      const stolen = await retry(user("bob"));
      expect(stolen.error).toEqual({ code: -32602, message: "Invalid or expired requestState" });
      const mine = await retry(user("ada"));
      expect(mine.result.structuredContent).toEqual({ action: "accept", user: "ada" });
    });

    it("should bind a task to its user: another one gets 'not found' for tasks/get and tasks/cancel", async () => {
      const created = await call(
        user("ada"),
        "tools/call",
        { name: "job", arguments: {} },
        { capabilities: TASKS },
      );
      expect(created.result.resultType).toBe("task");
      const taskId = created.result.taskId as string;
      const task = (send: Send, method: string) =>
        call(send, method, { taskId }, { capabilities: TASKS, headers: { "mcp-name": taskId } });
      for (const method of ["tasks/get", "tasks/cancel"]) {
        const theirs = await task(user("bob"), method);
        expect(theirs.error?.code).toBe(-32602);
        expect(theirs.error?.message).toMatch(/not found/i);
      }
      await expect
        .poll(async () => (await task(user("ada"), "tasks/get")).result, { timeout: 10_000 })
        .toMatchObject({ status: "completed", result: { structuredContent: { user: "ada" } } });
    });

    it("should apply tool scopes to the user's in both eras: 403 insufficient_scope for ada, 200 for admin", async () => {
      const denied = await call(user("ada"), "tools/call", { name: "admin_only", arguments: {} });
      expect(denied.status).toBe(403);
      expect(denied.error).toEqual({ code: -32600, message: "Insufficient scope: needs admin" });
      // Signed in through the app alone: there is no token to step up, so no Bearer challenge.
      expect(denied.headers.get("www-authenticate")).toBeNull();
      const allowed = await call(user("admin"), "tools/call", {
        name: "admin_only",
        arguments: {},
      });
      expect(allowed.status).toBe(200);
      expect(allowed.result.content).toEqual([{ type: "text", text: "admin" }]);
      const session = await openSession(user("ada"));
      const legacy = await legacyCall(user("ada"), session, "tools/call", {
        name: "admin_only",
        arguments: {},
      });
      expect([legacy.status, legacy.error?.message]).toEqual([
        403,
        "Insufficient scope: needs admin",
      ]);
    });
  },
);
