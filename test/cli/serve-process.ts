// `mcp-mount serve` run from the source with tsx, as test/cli/serve.test.ts starts it.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
/** The CLI's entry point in the source. */
export const MAIN = resolve(ROOT, "src/cli/main.ts");
// The CLI drains on SIGTERM; this preload sends it one when our stdin pipe breaks, so a serve
// process never outlives a test run that died.
const EXIT_WITH_PARENT = resolve(ROOT, "test/helpers/exit-with-parent.ts");

/** The test upstream (echo, slow, stderr, stats...) as serve's command, after `--`. */
export const TEST_UPSTREAM = [
  "--",
  process.execPath,
  "--import",
  "tsx",
  "test/helpers/gateway-upstream-server.ts",
];

/** A running `mcp-mount serve`. */
export interface ServeProcess {
  /** The endpoint it said it listens on. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it printed so far, stdout then stderr as they came. */
  output(): string;
  /** SIGTERM (a drain), SIGKILL after 15 s; resolves with its exit code. */
  stop(): Promise<number | null>;
  /** Resolves with its exit code once it exits, sending nothing. */
  exited(): Promise<number | null>;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => child.once("exit", (code) => done(code)));
}

/** Starts `mcp-mount serve <args>` and resolves once it prints where it listens. */
export function startServe(
  args: string[],
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--import", EXIT_WITH_PARENT, MAIN, "serve", "--port", "0", ...args],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    const code = await exitOf(child);
    clearTimeout(timer);
    return code;
  };
  return new Promise((resolve, reject) => {
    const onData = () => {
      // A start that failed: the preload's read of stdin would keep the process up.
      if (/^error: /m.test(output)) {
        child.kill("SIGKILL");
        reject(new Error(`mcp-mount serve failed to start:\n${output}`));
        return;
      }
      const match = /^mcp-mount serve listening on (http:\/\/\S+)$/m.exec(output);
      if (!match) return;
      child.off("exit", onExit);
      resolve({ url: match[1]!, child, output: () => output, stop, exited: () => exitOf(child) });
    };
    const onExit = (code: number | null) =>
      reject(new Error(`mcp-mount serve exited (${code}) before listening:\n${output}`));
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", onExit);
  });
}
