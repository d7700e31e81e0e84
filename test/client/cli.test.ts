import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OurServer, startOurServer } from "./servers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const BIN = join(ROOT, pkg.bin["mcp-mount"]);
const STDIO_SERVER = "node --import tsx test/client/fixtures/stdio-server.ts";

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
    const { stdout, code } = await cli("--json", "inspect", ...STDIO_SERVER.split(" "));
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
});
