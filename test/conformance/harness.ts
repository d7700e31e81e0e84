import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ClusterServer } from "../helpers/cluster.js";

/** The repository root: the conformance server and the suites are resolved from here. */
export const ROOT = resolve(import.meta.dirname, "../..");

/** The conformance CLI needs Node 22 (it imports `fs.globSync`); this one is fetched by npx. */
const NODE_22 = "node@22.23.3";

/** One check of a scenario, as the CLI writes it to `checks.json`. */
export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
  details?: unknown;
}

/** One invocation of a conformance CLI against the server. */
export interface ConformanceSuite {
  name: string;
  /** The CLI entry point, relative to {@link ROOT}. */
  cli: string;
  /** Arguments after `server --url <url>`. */
  args: string[];
  /** Every scenario the run must report. */
  scenarios: readonly string[];
}

/** What a suite run produced. */
export interface SuiteRun {
  /** Checks per scenario name. */
  results: Map<string, ConformanceCheck[]>;
  outputDir: string;
  /** The CLI's combined stdout and stderr. */
  log: string;
}

/** The conformance server, running in a child process. */
export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** Resolves true once `child` exits, or false after `ms`. */
export function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts examples/conformance/server.ts on a free port, on this Node, against dist/, with `env`
 * added to ours (a Redis to use, say).
 */
export function startConformanceServer(
  timeoutMs = 30_000,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/conformance/server.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    if (!(await waitForExit(child, 5_000))) child.kill("SIGKILL");
  };
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      void stop();
      reject(new Error(`Conformance server ${reason}. Output:\n${output}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs} ms`), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        child.off("exit", onExit);
        resolve({ url: match[1], stop });
      }
    };
    const onExit = (code: number | null) => fail(`exited with code ${code} before listening`);
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("exit", onExit);
  });
}

/**
 * examples/conformance/server.ts as one process of a cluster (test/helpers/cluster.ts): on the
 * cluster's Redis, every process sealing requestState with the same secret.
 */
export const CONFORMANCE_CLUSTER_SERVER: ClusterServer = {
  script: "examples/conformance/server.ts",
  env: { MCP_SECRET: "mcp-mount-conformance-cluster-secret" },
  listening: /listening on http:\/\/[^\s/]+:(\d+)\/mcp/,
};

/** The command that runs a script under Node 22 or newer. */
export function node22(): { command: string; prefix: string[] } {
  const configured = process.env.CONFORMANCE_NODE;
  if (configured) return { command: configured, prefix: [] };
  if (Number(process.versions.node.split(".")[0]) >= 22) {
    return { command: process.execPath, prefix: [] };
  }
  return { command: "npx", prefix: ["--yes", NODE_22] };
}

/** `server-<scenario>-<ISO timestamp with : and . as ->`, as the CLI names result folders. */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

async function readResults(outputDir: string): Promise<Map<string, ConformanceCheck[]>> {
  const results = new Map<string, ConformanceCheck[]>();
  for (const entry of (await readdir(outputDir)).sort()) {
    const scenario = RESULT_DIR.exec(entry)?.[1];
    if (!scenario) continue;
    const text = await readFile(join(outputDir, entry, "checks.json"), "utf8");
    results.set(scenario, JSON.parse(text) as ConformanceCheck[]);
  }
  return results;
}

/**
 * Runs one suite against `url` and reads every scenario's checks. Results go to a folder of
 * their own under `baseDir`; the CLI's exit code is not used, the checks are.
 */
export async function runSuite(
  suite: ConformanceSuite,
  url: string,
  baseDir: string,
  timeoutMs: number,
): Promise<SuiteRun> {
  await mkdir(baseDir, { recursive: true });
  const outputDir = await mkdtemp(join(baseDir, `${suite.name.replace(/[^\w.-]+/g, "_")}-`));
  const { command, prefix } = node22();
  const args = [...prefix, join(ROOT, suite.cli), "server", "--url", url, ...suite.args];
  // Its own process group, so a timeout also ends the Node 22 that npx starts.
  const child = spawn(command, [...args, "-o", outputDir], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString();
  });
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  const exited = await Promise.race([waitForExit(child, timeoutMs), spawnError]);
  if (exited !== true) {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    log += exited === false ? `\n[killed after ${timeoutMs} ms]` : `\n[${String(exited)}]`;
  }
  await writeFile(join(outputDir, "cli.log"), log);
  return { results: await readResults(outputDir), outputDir, log };
}

/** A fresh folder for suite results under the system temp folder. */
export function tempResultsDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "mcp-mount-conformance-"));
}
