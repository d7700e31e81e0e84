import cookieParser from "cookie-parser";
import type { Express } from "express";
import { toExpress } from "../../src/adapters/express.js";
import { appAuth } from "../../src/auth/index.js";
import {
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
  McpServer,
} from "../../src/index.js";

/** What the cookie-login app hands each request's handlers as `ctx.app`. */
export interface LoginApp {
  /** The user named by the signed `user` cookie; undefined when absent, forged or tampered. */
  user: string | undefined;
}

/** The cookie `POST /login` sets, signed so that any process holding the secret can verify it. */
export const LOGIN_COOKIE = "user";

/**
 * Tools that report who they run for: `whoami` (the app's user and the MCP principal), `ask`
 * (one multi round trip), `job` (a task) and `admin_only` (needs the scope `admin`).
 */
export function createLoginServer(): McpServer<LoginApp> {
  const server = new McpServer<LoginApp>({ name: "cookie-login", version: "1.0.0" });
  server.tool({ name: "whoami" }, (_args, ctx) => ({
    user: ctx.app.user ?? null,
    subject: ctx.auth?.subject ?? null,
    pid: process.pid,
  }));
  server.tool({ name: "ask" }, async (_args, ctx) => {
    const answer = await ctx.elicit("ok", {
      message: "Go on?",
      requestedSchema: { type: "object", properties: {} },
    });
    return { action: answer.action, user: ctx.app.user ?? null };
  });
  server.tool({ name: "job", taskSupport: "optional" }, (_args, ctx) => ({
    user: ctx.app.user ?? null,
    pid: process.pid,
  }));
  server.tool({ name: "admin_only", scopes: ["admin"] }, () => "admin");
  return server;
}

/** The MCP handler of the cookie-login app: the logged-in user is the principal; `admin` is admin. */
export function createLoginHandler(
  options: Omit<McpHandlerOptions<LoginApp>, "auth"> = {},
): McpHandler<LoginApp> {
  return createMcpHandler(createLoginServer(), {
    secret: "cookie-login",
    ...options,
    auth: appAuth<LoginApp>((_req, app) =>
      app.user ? { subject: app.user, scopes: app.user === "admin" ? ["admin"] : [] } : undefined,
    ),
  });
}

/**
 * Mounts the app's own login on `app`: `cookie-parser` with `cookieSecret`, `POST /login?user=`
 * setting the signed cookie, and the MCP endpoint at `/mcp` whose context is the cookie's user.
 */
export function mountCookieLogin(
  app: Express,
  mcp: McpHandler<LoginApp>,
  cookieSecret: string,
): void {
  app.use(cookieParser(cookieSecret));
  app.post("/login", (req, res) => {
    const user = req.query.user;
    if (typeof user !== "string" || user === "") {
      res.status(400).send("?user= is required");
      return;
    }
    res.cookie(LOGIN_COOKIE, user, { signed: true, httpOnly: true, sameSite: "lax" });
    res.status(204).end();
  });
  app.use(
    "/mcp",
    toExpress(mcp, {
      // cookie-parser gives `false` for a cookie whose signature does not verify.
      context: (req): LoginApp => {
        const user: unknown = req.signedCookies[LOGIN_COOKIE];
        return { user: typeof user === "string" ? user : undefined };
      },
    }),
  );
}

/** The `name=value` pair of the login cookie a `POST /login` response set. */
export function loginCookie(headers: Headers): string {
  const cookie = headers
    .getSetCookie()
    .map((line) => line.split(";")[0]!)
    .find((pair) => pair.startsWith(`${LOGIN_COOKIE}=`));
  if (!cookie) throw new Error(`No ${LOGIN_COOKIE} cookie was set`);
  return cookie;
}
