import { spawn } from "node:child_process";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuthExampleApp } from "../../examples/express-auth/app.js";
import { type LocalIssuer, startLocalIssuer } from "../../examples/shared/local-issuer.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** The built CLI (`npm run build` first). */
const BIN = join(ROOT, "dist/cli/main.js");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The authorization URLs the CLI printed and the "browser" followed. */
  signIns: URL[];
}

/**
 * Runs the CLI; each "Sign in at:" it prints is followed as a browser would: the issuer
 * approves at once, and its redirect is sent to the CLI's loopback listener.
 */
function cli(...args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT });
  const run: Run = { code: null, stdout: "", stderr: "", signIns: [] };
  child.stdout.on("data", (chunk) => (run.stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => {
    run.stderr += chunk;
    for (const [, url] of String(chunk).matchAll(/Sign in at: (\S+)/g)) {
      const authorizationUrl = new URL(url!);
      run.signIns.push(authorizationUrl);
      void fetch(authorizationUrl, { redirect: "manual" })
        .then((response) => fetch(response.headers.get("location")!))
        .then((response) => response.text());
    }
  });
  return new Promise((done) => child.on("exit", (code) => done({ ...run, code })));
}

let issuer: LocalIssuer;
let server: ReturnType<typeof createServer>;
let url: string;
let tokenStore: string;

beforeAll(async () => {
  issuer = await startLocalIssuer({ scopes: ["notes:read", "notes:write"] });
  const { app } = createAuthExampleApp({
    issuer: issuer.url,
    jwksUrl: issuer.jwksUrl,
    requiredScopes: ["notes:read"],
    secret: "cli-login-test-secret-of-32-bytes-long",
  });
  server = createServer(app);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  tokenStore = join(await mkdtemp(join(tmpdir(), "mcp-mount-cli-")), "config", "tokens.json");
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  await issuer?.close();
});

const kept = async () =>
  JSON.parse(await readFile(tokenStore, "utf8")) as Record<string, string | undefined>;

describe("mcp-mount login, call and logout against an OAuth-protected server", () => {
  it("should sign in, call with the kept token, step up, refresh, and sign out", async () => {
    const login = await cli("login", url, "--token-store", tokenStore);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Signed in to ${url}`);
    expect(login.signIns).toHaveLength(1);
    expect(login.signIns[0]!.searchParams.get("redirect_uri")).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/callback$/,
    );
    expect((await stat(tokenStore)).mode & 0o777).toBe(0o600);
    expect((await stat(join(tokenStore, ".."))).mode & 0o777).toBe(0o700);
    const tokens = JSON.parse((await kept())[`tokens ${url}`]!);

    // The kept token serves the next command: no sign-in.
    const whoami = await cli("call", url, "whoami", "--token-store", tokenStore);
    expect(whoami.code).toBe(0);
    expect(whoami.signIns).toHaveLength(0);
    expect(JSON.parse(whoami.stdout).structuredContent.scopes).toEqual(["notes:read"]);

    // A tool needing notes:write: the CLI asks the user to sign in again, for both scopes.
    const add = await cli(
      "call",
      url,
      "add_note",
      '{"text":"from the CLI"}',
      "--token-store",
      tokenStore,
    );
    expect(add.code).toBe(0);
    expect(add.signIns.map((u) => u.searchParams.get("scope"))).toEqual(["notes:read notes:write"]);

    // An expired token is refreshed, without the user.
    const refreshes = issuer.tokenRequests.filter((r) => r.grantType === "refresh_token").length;
    const values = await kept();
    const current = JSON.parse(values[`tokens ${url}`]!);
    values[`tokens ${url}`] = JSON.stringify({ ...current, expiresAt: Date.now() - 1000 });
    await writeFile(tokenStore, JSON.stringify(values));
    const list = await cli("call", url, "list_notes", "--token-store", tokenStore);
    expect(list.code).toBe(0);
    expect(list.signIns).toHaveLength(0);
    expect(issuer.tokenRequests.filter((r) => r.grantType === "refresh_token").length).toBe(
      refreshes + 1,
    );

    const logout = await cli("logout", url, "--token-store", tokenStore);
    expect(logout.stdout).toContain(`Signed out of ${url}`);
    expect((await kept())[`tokens ${url}`]).toBeUndefined();

    // Nothing the CLI printed carries a token.
    const printed = [login, whoami, add, list, logout].map((r) => r.stdout + r.stderr).join("\n");
    expect(printed).not.toContain(tokens.accessToken);
    expect(printed).not.toContain(tokens.refreshToken);
  });
});
