import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { call, viaUrl } from "../helpers/modern.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("examples/telemetry/instrumentation.ts (npm run example:otel)", () => {
  it("should print the SERVER span of a tool call made to the Express example", async () => {
    // As `npm run example:otel` runs it: the SDK loaded before the app, which imports the built package.
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        "./examples/telemetry/instrumentation.ts",
        "examples/express/server.ts",
      ],
      {
        cwd: ROOT,
        env: { ...process.env, PORT: "0", MCP_SECRET: "example-test" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    try {
      await expect
        .poll(() => /listening on (http:\/\/\S+\/mcp)/.exec(output)?.[1], { timeout: 20_000 })
        .toBeTruthy();
      const url = /listening on (http:\/\/\S+\/mcp)/.exec(output)![1]!;
      const { result } = await call(viaUrl(url), "tools/call", {
        name: "echo",
        arguments: { text: "traced" },
      });
      expect(result.isError).toBeFalsy();
      // ConsoleSpanExporter prints each span as an object: its name, kind 1 (SERVER), attributes.
      await expect.poll(() => output, { timeout: 5_000 }).toContain("name: 'tools/call echo'");
      expect(output).toContain("'mcp.method.name': 'tools/call'");
      expect(output).toContain("'gen_ai.tool.name': 'echo'");
      expect(output).toContain("kind: 1");
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      expect((await exited)[0]).toBe(0);
    }
  }, 40_000);
});
