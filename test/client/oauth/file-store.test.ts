import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileOAuthStore } from "../../../src/client/oauth/file-store.js";

const WRITER = "test/client/fixtures/oauth-store-writer.ts";

/** Starts a writer process and resolves once it waits for "go". */
async function startWriter(path: string, name: string, count: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", WRITER, path, name, String(count)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await once(child.stdout!, "data");
  return child;
}

describe("fileOAuthStore", () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oauth-store-"));
    path = join(dir, "tokens.json");
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("should keep every entry written by concurrent processes", { timeout: 60_000 }, async () => {
    const writers = await Promise.all(
      ["a", "b", "c", "d", "e", "f"].map((name) => startWriter(path, name, 5)),
    );
    const exits = writers.map((child) => once(child, "exit"));
    for (const child of writers) child.stdin!.write("go\n");
    expect((await Promise.all(exits)).map(([code]) => code)).toEqual([0, 0, 0, 0, 0, 0]);
    const values = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(values)).toHaveLength(30);
    expect(values["d-4"]).toBe("value of d-4");
    // No lock and no temporary file is left behind.
    expect(await readdir(dir)).toEqual(["tokens.json"]);
  });

  it("should keep every entry of two stores on one path in one process", async () => {
    const one = fileOAuthStore(path);
    const two = fileOAuthStore(path);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).set(`k${i}`, `v${i}`)),
    );
    await Promise.all([one.delete("k0"), two.delete("k1")]);
    const values = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(values).sort()).toEqual(
      Array.from({ length: 18 }, (_, i) => `k${i + 2}`).sort(),
    );
    expect(await one.get("k19")).toBe("v19");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("should not follow a symlink planted at a predictable temporary path", async () => {
    const victim = join(dir, "victim");
    await writeFile(victim, "untouched", { mode: 0o644 });
    await symlink(victim, `${path}.${process.pid}.tmp`);
    const store = fileOAuthStore(path);
    await store.set("tokens", "secret");
    expect(await readFile(victim, "utf8")).toBe("untouched");
    expect((await stat(victim)).mode & 0o777).toBe(0o644);
    expect(await store.get("tokens")).toBe("secret");
  });

  it("should take over the lock of a writer that is gone, and wait for one that is not", async () => {
    // A lock left by a process that ended (its pid is no longer running on this host).
    const gone = spawn(process.execPath, ["-e", ""]);
    await once(gone, "exit");
    await writeFile(
      `${path}.lock`,
      JSON.stringify({ pid: gone.pid, host: hostname(), nonce: "x" }),
    );
    await fileOAuthStore(path).set("after-crash", "kept");
    expect(await fileOAuthStore(path).get("after-crash")).toBe("kept");
    // A lock held by a live process (this one) is waited for, within the bound.
    await writeFile(
      `${path}.lock`,
      JSON.stringify({ pid: process.pid, host: hostname(), nonce: "y" }),
    );
    await expect(fileOAuthStore(path, { lockTimeoutMs: 50 }).set("k", "v")).rejects.toThrow(
      /locked by another writer/,
    );
  });
});
