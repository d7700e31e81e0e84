// The test command's set-up step (test/provision.ts) on a bare machine: a PATH that holds only
// `node` and `npm`. It finds the Chromium packaged on npm, and for Redis it either takes the
// binary it is pointed at or stops at once with one message saying what to install.
import { spawn } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOnPath, redisServerBinary, startRedisServer } from "../helpers/redis-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let bin: string;
let realRedis: string;

beforeAll(async () => {
  realRedis = redisServerBinary() ?? "";
  expect(realRedis, "npm test's set-up step provides a Redis server binary").not.toBe("");
  bin = await mkdtemp(join(tmpdir(), "mcp-mount-bare-"));
  await symlink(process.execPath, join(bin, "node"));
  const npm = findOnPath("npm");
  if (npm) await symlink(npm, join(bin, "npm"));
});
afterAll(async () => {
  if (bin) await rm(bin, { recursive: true, force: true });
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the set-up step with only `bin` on PATH and the given variables. */
function provision(env: Record<string, string> = {}): Promise<Outcome> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/provision.ts"], {
    cwd: ROOT,
    env: { HOME: process.env.HOME ?? tmpdir(), PATH: bin, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

describe("the test command's set-up step with only node and npm on PATH", () => {
  it("stops at once with one message when there is no Redis server binary", async () => {
    const { code, stdout, stderr } = await provision();
    expect(code).toBe(1);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/found none \(redis-server or valkey-server on PATH\)/);
    expect(lines[0]).toMatch(/install one with `[^`]*(apt-get|dnf|brew) install redis/);
    expect(lines[0]).toContain("REDIS_SERVER=");
  });

  it("says so when REDIS_SERVER names a binary that does not run", async () => {
    const { code, stderr } = await provision({ REDIS_SERVER: join(bin, "no-such-redis") });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain("no-such-redis");
  });

  it("takes REDIS_SERVER and finds the Chromium packaged on npm", async () => {
    const { code, stdout, stderr } = await provision({ REDIS_SERVER: realRedis });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain(`at ${realRedis};`);
    expect(stdout).toMatch(/Chromium \d+\.[\d.]+ at \S+ \(@sparticuz\/chromium\)/);
  });

  it("accepts Valkey's valkey-server on PATH", async () => {
    const valkey = join(bin, "valkey-server");
    await symlink(realRedis, valkey);
    try {
      const { code, stdout } = await provision();
      expect(code).toBe(0);
      expect(stdout).toContain(`at ${valkey};`);
    } finally {
      await rm(valkey);
    }
  });
});

describe("startRedisServer", () => {
  it("starts the binary REDIS_SERVER names", async () => {
    const saved = process.env.REDIS_SERVER;
    process.env.REDIS_SERVER = join(bin, "no-such-redis");
    try {
      await expect(startRedisServer()).rejects.toThrow(/no-such-redis/);
    } finally {
      if (saved === undefined) delete process.env.REDIS_SERVER;
      else process.env.REDIS_SERVER = saved;
    }
  });
});
