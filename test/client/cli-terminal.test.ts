import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler, ErrorCode, McpError, McpServer } from "../../src/index.js";
import { type Mounted, mount } from "../helpers/transports.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(
  ROOT,
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).bin["mcp-mount"],
);
const run = promisify(execFile);

/** Clear the screen, write the clipboard (OSC 52), ring, the same in C1 (CSI, OSC), DEL. */
const EVIL = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\u009b2J\u009d0;owned\x07\x7f";
/** Every control a terminal acts on, bar the newline and tab the CLI's layout uses. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** A server putting terminal controls in everything the CLI shows of it. */
function hostileServer(): McpServer {
  const server = new McpServer({
    name: `hostile${EVIL}`,
    version: "1.0.0",
    instructions: `Be nice${EVIL}`,
  });
  server.tool({ name: "noisy", description: `Does things${EVIL}` }, async (_args, ctx) => {
    await ctx.progress(1, 2, `half${EVIL}`);
    return `done${EVIL}`;
  });
  server.tool({ name: "fails" }, () => {
    throw new McpError(ErrorCode.InvalidParams, `bad${EVIL}`);
  });
  server.tool({ name: "asks" }, async (_args, ctx) => {
    const answer = await ctx.elicit("confirm", {
      mode: "form",
      message: `Delete everything${EVIL}?`,
      requestedSchema: {
        type: "object",
        properties: { ok: { type: "boolean", title: `OK${EVIL}` } },
      },
    });
    return { action: answer.action, content: answer.content ?? null };
  });
  return server;
}

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { cwd: ROOT });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

/** util-linux `script`, which runs a command on a pseudo-terminal fed from our pipe. */
const hasScript = (() => {
  try {
    return /util-linux/.test(readFileSync("/usr/bin/script", "latin1"));
  } catch {
    return false;
  }
})();

describe("the CLI and a server's terminal controls (the built CLI)", () => {
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount("node", createMcpHandler(hostileServer(), { secret: "controls" }));
  });
  afterAll(() => mounted.close());

  it("should show the controls in inspect's text as visible escapes", async () => {
    for (const era of ["modern", "legacy"]) {
      const { stdout, stderr, code } = await cli("--era", era, "inspect", mounted.url);
      expect(code, era).toBe(0);
      expect(stdout + stderr, era).not.toMatch(RAW_CONTROL);
      expect(stdout, era).toContain("hostile\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\x9b2J\\x9d0;owned");
      expect(stdout, era).toContain("noisy [destructive, open-world] — Does things\\x1b[2J");
      expect(stdout, era).toContain("Be nice\\x1b[2J");
    }
  });

  it("should keep --json exact: the same strings, parsed, and no raw control printed", async () => {
    const { stdout, code } = await cli("--json", "inspect", mounted.url);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(RAW_CONTROL);
    const report = JSON.parse(stdout);
    expect(report.server.serverInfo.name).toBe(`hostile${EVIL}`);
    expect(report.server.instructions).toBe(`Be nice${EVIL}`);
    expect(report.tools.find((t: { name: string }) => t.name === "noisy").description).toBe(
      `Does things${EVIL}`,
    );
  });

  it("should escape progress messages and keep the result's JSON exact", async () => {
    const { stdout, stderr, code } = await cli("call", mounted.url, "noisy", "{}");
    expect(code).toBe(0);
    expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    expect(stderr).toContain("progress 1/2 half\\x1b[2J");
    expect(JSON.parse(stdout).content).toEqual([{ type: "text", text: `done${EVIL}` }]);
  });

  it("should escape a server's error message", async () => {
    const { stdout, stderr, code } = await cli("call", mounted.url, "fails", "{}");
    expect(code).toBe(1);
    expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    expect(stderr).toContain("error: bad\\x1b[2J");
  });

  it("should escape an elicitation it declines for want of a terminal", async () => {
    const { stdout, stderr, code } = await cli("call", mounted.url, "asks", "{}");
    expect(code).toBe(0);
    expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    expect(stderr).toContain("The server asked: Delete everything\\x1b[2J");
    expect(JSON.parse(stdout).structuredContent).toEqual({ action: "decline", content: null });
  });

  it.skipIf(!hasScript)(
    "should escape an elicitation's message and fields on a terminal",
    async () => {
      const command = [process.execPath, BIN, "call", mounted.url, "asks", "{}"].join(" ");
      const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ROOT });
      let seen = "";
      const answers = [
        { after: /OK[^\n]*: /, type: "y\r" },
        { after: /Send\? \[Y\/n\] /, type: "\r" },
      ];
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        seen += chunk;
        // Answered as a user would: each prompt once it is shown.
        if (answers[0]?.after.test(seen)) child.stdin.write(answers.shift()!.type);
      });
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(seen).toContain("Delete everything\\x1b[2J");
      expect(seen).toContain("OK\\x1b[2J");
      expect(seen).toContain('"action": "accept"');
      // The terminal itself speaks controls (CR, its own line editing): none of the server's.
      for (const raw of ["\x1b[2J", "\x1b]52", "\x07", "\u009b", "\u009d", "\x7f"]) {
        expect(seen).not.toContain(raw);
      }
    },
  );
});
