import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertModernMessage } from "../helpers/spec.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Starts `npm run example:auth`'s script and collects what it prints until the command is out. */
async function startExample(): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/express-auth/server.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", MCP_SECRET: "example-auth-test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`example did not start:\n${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      if (output.includes("-d '{")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => reject(new Error(`example exited with ${code}:\n${output}`)));
  });
  return { child, output };
}

describe("examples/express-auth (npm run example:auth)", () => {
  let example: { child: ChildProcess; output: string };
  beforeAll(async () => {
    example = await startExample();
  }, 40_000);
  afterAll(() => {
    example?.child.kill("SIGTERM");
  });

  it("should print a metadata URL that serves the document", async () => {
    const url = /Protected Resource Metadata: (\S+)/.exec(example.output)?.[1];
    expect(url).toBeDefined();
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document.scopes_supported).toEqual(["notes:read", "notes:write"]);
    expect(document.resource).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("should print a command that gets a token and calls a protected tool", async () => {
    const lines = example.output.split("\n");
    const start = lines.findIndex((line) => line.startsWith("Get a token"));
    const command = lines
      .slice(start + 1)
      .join("\n")
      .trim();
    const { stdout } = await promisify(execFile)("bash", ["-c", command], { timeout: 20_000 });
    const message = JSON.parse(stdout);
    assertModernMessage(message, "tools/call");
    expect(message.result.structuredContent).toEqual({ id: "1" });
  });

  it("should refuse the same call without the token", async () => {
    const url = /listening on (\S+)/.exec(example.output)?.[1];
    const response = await fetch(url!, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata=");
  });
});
