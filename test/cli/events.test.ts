// `mcp-mount events`: listing and following an event type, run from the source with tsx
// against our server on node:http (127.0.0.1); what the server sends is printed inert.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { createEventsServer } from "../helpers/events-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = resolve(ROOT, "src/cli/main.ts");
const run = promisify(execFile);

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", MAIN, ...args], {
      cwd: ROOT,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

/** A running `events --follow`: its output so far, and its exit. */
function follow(...args: string[]) {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], {
    cwd: ROOT,
  });
  const output = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk) => (output.stdout += chunk));
  child.stderr!.on("data", (chunk) => (output.stderr += chunk));
  const exit = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, output, exit };
}

describe("mcp-mount events", () => {
  const server = createEventsServer();
  server.event({ name: "evil", description: "rings \u0007 and retitles \u001b]0;pwned\u0007" });
  let mcp: McpHandler;
  let url = "";
  let close = async () => {};

  beforeAll(async () => {
    mcp = createMcpHandler(server, { legacy: true, events: { pollIntervalMs: 50 } });
    const handle = toNodeHandler(mcp);
    const http = createServer((req, res) => void handle(req, res));
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    close = async () => {
      await mcp.close();
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
    };
  });
  afterAll(() => close());

  it("should list the event types with their delivery modes, controls escaped", async () => {
    const { stdout, code } = await cli("events", url);
    expect(code).toBe(0);
    expect(stdout).toContain("Event types (4)");
    expect(stdout).toContain("note.created [poll, push] — A note was created");
    expect(stdout).toContain("poll.only [poll]");
    expect(stdout).toContain("evil [poll, push] — rings \\x07 and retitles \\x1b]0;pwned\\x07");
    expect(["\u0007", "\u001b"].filter((control) => stdout.includes(control))).toEqual([]);
    const json = await cli("events", url, "--json", "--era", "legacy");
    expect(JSON.parse(json.stdout).map((e: { name: string }) => e.name)).toEqual([
      "note.created",
      "poll.only",
      "guarded",
      "evil",
    ]);
  });

  it.each([
    ["push", []],
    ["poll", ["--poll"]],
  ])(
    "should follow by %s, print each occurrence inert, and stop on Ctrl-C",
    async (mode, extra) => {
      const running = follow(
        "events",
        url,
        "--follow",
        "note.created",
        "--args",
        '{"tag":"a"}',
        ...extra,
      );
      await expect
        .poll(() => running.output.stderr, { timeout: 20_000 })
        .toContain(`following note.created by ${mode}`);
      await server.emit("note.created", { id: "n1", tag: "b" });
      await server.emit("note.created", { id: "n2", tag: "a", author: "\u001b[2J\u009b31m" });
      await expect.poll(() => running.output.stdout, { timeout: 10_000 }).toContain('"n2"');
      running.child.kill("SIGINT");
      expect(await running.exit).toBe(0);
      const printed = JSON.parse(running.output.stdout);
      expect(printed).toMatchObject({ name: "note.created", data: { id: "n2", tag: "a" } });
      expect(printed.data.author).toBe("\u001b[2J\u009b31m");
      const raw = ["\u001b", "\u009b"].filter((control) => running.output.stdout.includes(control));
      expect(raw).toEqual([]);
    },
  );

  it("should refuse event options on other commands and --args without --follow", async () => {
    const misplaced = await cli("inspect", url, "--follow", "x");
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain(
      "--follow, --args, --poll and --push go with the events command",
    );
    const alone = await cli("events", url, "--poll");
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("need --follow <name>");
  });
});
