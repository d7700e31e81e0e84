import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerAuth } from "../../src/auth/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { type OurServer, startOurServer } from "./servers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const BIN = join(ROOT, pkg.bin["mcp-mount"]);
const STDIO_SERVER = "node --import tsx test/client/fixtures/stdio-server.ts";
/** The same server, reading stdin only 4 s after it starts: past the 3 s era probe. */
const SLOW_STDIO_SERVER = "node --import tsx test/client/fixtures/slow-stdio-server.ts 4000";

/** Runs the built CLI (`npm run build` first) and returns its output and exit code. */
async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { cwd: ROOT });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

describe("the mcp-mount CLI", () => {
  let ours: OurServer;

  beforeAll(async () => {
    ours = await startOurServer("node");
  });
  afterAll(() => ours.close());

  it("should be the package's bin, built with a shebang", () => {
    expect(existsSync(BIN)).toBe(true);
    expect(readFileSync(BIN, "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
  });

  it("should inspect a server over HTTP: info, tools with predicates, prompts, resources", async () => {
    const { stdout, code } = await cli("inspect", ours.url);
    expect(code).toBe(0);
    expect(stdout).toContain("fixture 1.0.0");
    expect(stdout).toContain("modern era, protocol 2026-07-28");
    expect(stdout).toContain("echo [read-only, open-world]");
    expect(stdout).toContain("json [destructive, open-world]");
    expect(stdout).toContain("greet(who, style?) — Greets someone");
    expect(stdout).toContain("test://items/{id} — item");
  });

  it("should inspect a server started as a command, and print JSON on request", async () => {
    const { stdout, code } = await cli("--json", "inspect", "--", ...STDIO_SERVER.split(" "));
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.era).toBe("modern");
    expect(report.tools.find((t: { name: string }) => t.name === "echo")).toMatchObject({
      readOnly: true,
      destructive: false,
    });
  });

  it("should call a tool with JSON arguments, over HTTP and over stdio, in either era", async () => {
    const http = await cli("call", ours.url, "echo", '{"text":"hi"}');
    expect(http.code).toBe(0);
    expect(JSON.parse(http.stdout).content).toEqual([{ type: "text", text: "hi" }]);
    const legacy = await cli("--era", "legacy", "call", STDIO_SERVER, "echo", '{"text":"pipe"}');
    expect(JSON.parse(legacy.stdout).content).toEqual([{ type: "text", text: "pipe" }]);
  });

  it("should exit 1 for a tool error and for a server it cannot reach, 2 for bad usage", async () => {
    expect((await cli("call", ours.url, "throws")).code).toBe(1);
    const unreachable = await cli("inspect", "http://127.0.0.1:1/mcp");
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^error: /);
    expect((await cli("frobnicate")).code).toBe(2);
  });

  describe("options anywhere on the line", () => {
    let guarded: Mounted;

    beforeAll(async () => {
      const server = new McpServer({ name: "guarded", version: "1.0.0" });
      server.tool({ name: "whoami" }, (_args, ctx) => ({ subject: ctx.auth?.subject ?? null }));
      const auth = bearerAuth({
        // Nothing listens there: the CLI's attempt to sign in finds no authorization server.
        authorizationServers: ["http://127.0.0.1:1"],
        verify: (token) =>
          token === "cli-token" ? { subject: "cli-user", scopes: [] } : undefined,
      });
      guarded = await mount(
        "node",
        createMcpHandler(server, { auth, secret: "cli-tests", legacy: true }),
      );
    });
    afterAll(() => guarded.close());

    it("should send -H given after the URL to a server that requires it", async () => {
      const refused = await cli("call", guarded.url, "whoami", "{}");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: No authorization server metadata found/);
      const called = await cli(
        "call",
        guarded.url,
        "whoami",
        "{}",
        "-H",
        "Authorization: Bearer cli-token",
      );
      expect(called.stderr).toBe("");
      expect(called.code).toBe(0);
      expect(JSON.parse(called.stdout).structuredContent).toEqual({ subject: "cli-user" });
    });

    it("should take --json and --era after the URL too", async () => {
      const { stdout, code } = await cli(
        "inspect",
        guarded.url,
        "--json",
        "--header=Authorization: Bearer cli-token",
        "--era",
        "legacy",
      );
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({
        era: "legacy",
        server: { serverInfo: { name: "guarded" } },
      });
    });

    it("should refuse an unknown option with exit 2, and say where a command's own options go", async () => {
      const unknown = await cli("call", ours.url, "echo", "{}", "--frobnicate");
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/^error: unknown option --frobnicate/);
      expect(unknown.stdout).toBe("");
      const commandOption = await cli("inspect", ...STDIO_SERVER.split(" "));
      expect(commandOption.code).toBe(2);
      expect(commandOption.stderr).toMatch(/^error: unknown option --import .*after --/);
    });

    it("should refuse leftover arguments and bad option values with exit 2", async () => {
      const refusals = [
        [["call", ours.url, "echo", "{}", "extra"], /unexpected argument extra/],
        [["inspect", ours.url, "extra"], /unexpected argument extra: a URL takes no arguments/],
        [["inspect", ours.url, "--era", "sideways"], /--era is modern, legacy or auto/],
        [["inspect", ours.url, "--timeout"], /--timeout/],
        [["inspect", ours.url, "--timeout", "soon"], /--timeout takes milliseconds/],
        [["inspect", ours.url, "-H", "no colon"], /-H takes "Name: value"/],
        [["call", ours.url, "echo", "{not json"], /not JSON/],
      ] as const;
      for (const [args, message] of refusals) {
        const { code, stderr } = await cli(...args);
        expect({ args, code }).toEqual({ args, code: 2 });
        expect(stderr).toMatch(message);
      }
    });

    it("should pass everything after -- to the server command verbatim", async () => {
      const { stdout, code } = await cli(
        "inspect",
        "--era",
        "modern",
        "--",
        ...STDIO_SERVER.split(" "),
        "--json",
      );
      expect(code).toBe(0);
      // --json went to the server command, so the report is text.
      expect(stdout).toContain("modern era, protocol 2026-07-28");
    });
  });

  describe.concurrent("a stdio server slow to start", () => {
    it("should wait for it with a forced era, as long as --timeout says", {
      timeout: 20_000,
    }, async () => {
      const { stdout, stderr, code } = await cli(
        "--era",
        "modern",
        "--timeout",
        "30000",
        "call",
        SLOW_STDIO_SERVER,
        "echo",
        '{"text":"late"}',
      );
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(JSON.parse(stdout).content).toEqual([{ type: "text", text: "late" }]);
    });

    it("should detect the modern era when it answers after the probe's wait", {
      timeout: 20_000,
    }, async () => {
      const { stdout, stderr, code } = await cli(
        "inspect",
        "--json",
        "--",
        ...SLOW_STDIO_SERVER.split(" "),
      );
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ era: "modern", protocolVersion: "2026-07-28" });
    });

    it("should give up connecting when --timeout passes first", { timeout: 20_000 }, async () => {
      const { stderr, code } = await cli(
        "inspect",
        "--era",
        "modern",
        "--timeout",
        "500",
        "--",
        ...SLOW_STDIO_SERVER.split(" "),
      );
      expect(code).toBe(1);
      expect(stderr).toContain("error: The server did not answer within 500 ms (--timeout)");
    });
  });
});
