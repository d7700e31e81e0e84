import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NEXT_BIN = `${ROOT}node_modules/next/dist/bin/next`;

/** A `next start` server running in its own process group. */
export interface NextApp {
  /** Origin the server listens on, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  /** Everything the server printed so far, for failure messages. */
  output(): string;
  /** Stops the whole process group. */
  close(): Promise<void>;
}

function nextEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  // vitest sets NODE_ENV=test, which `next build` refuses to mix with a production build.
  const { NODE_ENV: _drop, ...env } = process.env;
  return { ...env, NEXT_TELEMETRY_DISABLED: "1", ...extra };
}

function run(
  args: string[],
  dir: string,
  env: Record<string, string>,
  detached = false,
): ChildProcess {
  return spawn(process.execPath, [NEXT_BIN, ...args], {
    cwd: dir,
    env: nextEnv(env),
    detached,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs `next build` in `dir`; resolves with the build's duration and output, rejects with its output. */
export async function buildNextApp(
  dir: string,
  env: Record<string, string> = {},
): Promise<{ durationMs: number; output: string }> {
  if (!existsSync(`${ROOT}dist/adapters/next.js`)) {
    throw new Error("dist/ is missing: run `npm run build` before the Next.js tests");
  }
  const started = Date.now();
  const child = run(["build"], dir, env);
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`next build exited with ${code}:\n${output}`);
  return { durationMs: Date.now() - started, output };
}

/** Options of {@link startNextApp}. */
export interface StartNextAppOptions {
  /** Loopback port to listen on. @default 0 (any free port) */
  port?: number;
  /** How long to wait for "Ready". @default 60_000 */
  timeoutMs?: number;
}

/** Starts `next start` in `dir` on a loopback port and waits until it is ready. */
export async function startNextApp(
  dir: string,
  env: Record<string, string> = {},
  { port = 0, timeoutMs = 60_000 }: StartNextAppOptions = {},
): Promise<NextApp> {
  // Port 0 lets the kernel pick; Next prints the port it got on its "Local:" line.
  // Its own process group, so close() also ends the workers `next start` forks.
  const args = ["start", "--hostname", "127.0.0.1", "--port", String(port)];
  const child = run(args, dir, env, true);
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid!, "SIGTERM");
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`next start was not ready after ${timeoutMs} ms`),
      timeoutMs,
    );
    const fail = (reason: string) => {
      clearTimeout(timer);
      void close();
      reject(new Error(`${reason}:\n${output}`));
    };
    const onData = (chunk: Buffer) => {
      output += chunk;
      const local = /Local:\s+(http:\/\/\S+)/.exec(output);
      if (local && /Ready in/.test(output)) {
        clearTimeout(timer);
        resolve(local[1]!);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => fail(`next start exited with ${code}`));
  });
  return { origin, output: () => output, close };
}
