import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway `redis-server` the cluster primary owns. */
export interface LocalRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no free port")),
      );
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  const running = child.pid !== undefined && child.exitCode === null && child.signalCode === null;
  if (!running) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts `redis-server` (from PATH) on a free loopback port, in a temporary directory, without
 * persistence. It runs in its own process group, so a Ctrl+C reaches the workers but not Redis:
 * they close their connections first, then the primary stops it.
 */
export async function startLocalRedis(): Promise<LocalRedis> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-mount-cluster-redis-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const child = spawn("redis-server", [...args, "--dir", dir], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  // Should the primary exit without stopping it, Redis goes too.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.off("exit", killOnExit);
    const gone = exited(child);
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await gone;
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };

  let output = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("not ready within 10 s")), 10_000);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      child.once("error", (error: NodeJS.ErrnoException) =>
        fail(
          error.code === "ENOENT" ? new Error("there is no redis-server binary on PATH") : error,
        ),
      );
      child.once("exit", (code) => fail(new Error(`exited with code ${code}`)));
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk));
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk;
        if (output.includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } catch (error) {
    await stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`redis-server did not start: ${reason}${output ? `\n${output}` : ""}`);
  }
  child.stdout?.resume();
  child.stderr?.resume();
  return { url: `redis://127.0.0.1:${port}`, stop };
}
