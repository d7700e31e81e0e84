import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MAIN, TEST_UPSTREAM } from "./serve-process.js";

const ROOT = resolve(import.meta.dirname, "../..");

// `mcp-mount serve` on a port already taken: it must exit 1 with the reason, not stay up with
// its upstream child (whose pipes keep the event loop alive) and never answer.

describe("mcp-mount serve on a port in use", () => {
  it("should exit 1 with the reason and leave no upstream child behind", async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const port = (taken.address() as AddressInfo).port;
    try {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", MAIN, "serve", "--port", String(port), ...TEST_UPSTREAM],
        { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      const exited = new Promise<number | null>((done) => child.once("exit", done));
      // Bounded here only so that a failure kills the process rather than the test run.
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const code = await exited;
      clearTimeout(timer);
      expect(output).toContain("EADDRINUSE");
      expect(code).toBe(1);
    } finally {
      await new Promise<void>((done) => taken.close(() => done()));
    }
  }, 60_000);
});
