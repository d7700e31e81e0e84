import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ClusterServer } from "./cluster.js";

/** The repository root, where the gateway's children run. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXIT_WITH_PARENT = fileURLToPath(new URL("./exit-with-parent.ts", import.meta.url));

/** The official reference server's stdio entry point (`mcp-server-everything`), run by this Node. */
export const EVERYTHING_BIN = `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;

/** The upstreams a gateway process may front. */
export type GatewayUpstream = "everything" | "test";

/**
 * The command line of each upstream: server-everything over stdio (it runs on Node 20), and
 * test/helpers/gateway-fleet-upstream.ts (our stdio server with echo, pid, crash and ask_pid).
 */
export const UPSTREAM_COMMANDS: Record<
  GatewayUpstream,
  { command: string; args: string[]; cwd: string }
> = {
  everything: { command: process.execPath, args: [EVERYTHING_BIN, "stdio"], cwd: ROOT },
  test: {
    command: process.execPath,
    args: ["--import", "tsx", `${ROOT}test/helpers/gateway-fleet-upstream.ts`],
    // tsx is resolved from here.
    cwd: ROOT,
  },
};

/** test/helpers/gateway-server.ts as a backend of test/helpers/cluster.ts, fronting `upstream`. */
export function gatewayServer(
  upstream: GatewayUpstream = "everything",
  env: Record<string, string> = {},
): ClusterServer {
  return {
    script: fileURLToPath(new URL("./gateway-server.ts", import.meta.url)),
    env: { GATEWAY_UPSTREAM: upstream, ...env },
    listening: /^listening (\d+)$/m,
  };
}

/** One gateway process started on its own (memory store). */
export interface GatewayProcess {
  /** Its endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** SIGTERM (a drain), SIGKILL after 10 s; resolves with its exit code once it exited. */
  stop(): Promise<number | null>;
}

/** How a gateway process is started: our test script, or the real `mcp-mount serve` CLI. */
export type GatewayLauncher =
  | { kind: "script"; upstream?: GatewayUpstream; env?: Record<string, string> }
  | { kind: "cli"; flags?: string[]; upstream?: GatewayUpstream };

function commandOf(launcher: GatewayLauncher): { args: string[]; env: Record<string, string> } {
  if (launcher.kind === "script") {
    const script = gatewayServer(launcher.upstream, launcher.env);
    return { args: ["--import", "tsx", script.script], env: { ...script.env, PORT: "0" } };
  }
  const upstream = UPSTREAM_COMMANDS[launcher.upstream ?? "everything"];
  return {
    args: [
      "--import",
      "tsx",
      // The CLI drains on SIGTERM; this sends it one when our stdin pipe breaks.
      "--import",
      EXIT_WITH_PARENT,
      `${ROOT}src/cli/main.ts`,
      "serve",
      "--port",
      "0",
      ...(launcher.flags ?? []),
      "--",
      upstream.command,
      ...upstream.args,
    ],
    env: {},
  };
}

/** Matches the line either launcher prints once it listens: the script's port, or the CLI's URL. */
const LISTENING = /^listening (\d+)$|listening on (http:\/\/\S+)/m;

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/**
 * Starts one gateway process and resolves once it listens. Its stdin stays a pipe from us, so
 * the script (and the CLI, through the loader) goes away with the test process.
 */
export async function startGateway(
  launcher: GatewayLauncher = { kind: "script" },
  timeoutMs = 30_000,
): Promise<GatewayProcess> {
  const { args, env } = commandOf(launcher);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: "", REDIS_CLUSTER_NODES: "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await exitOf(child);
    clearTimeout(timer);
    return code;
  };
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(`did not listen within ${timeoutMs} ms`), timeoutMs);
    const fail = (reason: string) => {
      clearTimeout(timer);
      void stop();
      reject(new Error(`Gateway ${launcher.kind} ${reason}. Output:\n${output}`));
    };
    const onData = () => {
      const match = LISTENING.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve(match[2] ?? `http://127.0.0.1:${match[1]}/mcp`);
    };
    const onExit = (code: number | null) => fail(`exited (${code}) before listening`);
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });
  return { url, child, output: () => output, stop };
}
