import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { McpClient } from "mcp-mount/client";
import { stdio } from "mcp-mount/client/stdio";
import { Client } from "undici";
import type { RunResult } from "./load.js";
import { ECHO_TEXT } from "./request.js";
import { quantile } from "./stats.js";
import { legacyWorkload } from "./workload.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const TSX = import.meta.resolve("tsx");

/** The upstream every target reaches: the echo tool over stdio, in a process of its own. */
export const UPSTREAM = {
  command: process.execPath,
  args: ["--import", TSX, fileURLToPath(new URL("./servers/stdio-echo.ts", import.meta.url))],
};

/** A gateway process serving the upstream on loopback HTTP. */
export interface RunningGateway {
  label: string;
  origin: string;
  /** The gateway process's CPU time so far (user + system, not its upstream's), in µs. */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * `mcp-mount serve` as users run it: the built CLI when dist has the gateway, else the source
 * through tsx (said in the label, since the figures then include nothing of the build).
 */
export function startServe(): Promise<RunningGateway> {
  const built = existsSync(`${ROOT}dist/gateway/index.js`);
  const cli = built ? [`${ROOT}dist/cli/main.js`] : ["--import", TSX, `${ROOT}src/cli/main.ts`];
  const args = [...cli, "serve", "--port", "0", "--grace-ms", "1000", "--", ...commandLine()];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return gateway(child, built ? "mcp-mount serve" : "mcp-mount serve (src via tsx)", (out) => {
    const match = /listening on (http:\/\/[^/\s]+)/.exec(out);
    return match ? match[1]! : undefined;
  });
}

/** mcp-proxy's CLI (npm `mcp-proxy`, its Streamable HTTP endpoint at /mcp), on a free port. */
export async function startMcpProxy(): Promise<RunningGateway> {
  const port = await freePort();
  const bin = `${ROOT}node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs`;
  const args = [bin, "--port", String(port), "--host", "127.0.0.1", "--server", "stream"];
  const child = spawn(process.execPath, [...args, "--", ...commandLine()], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr!.resume();
  const origin = `http://127.0.0.1:${port}`;
  // It says it starts before it listens: ready once a session opens.
  const running = await gateway(child, "mcp-proxy", () => origin);
  await answering(origin);
  return running;
}

function commandLine(): string[] {
  return [UPSTREAM.command, ...UPSTREAM.args];
}

function gateway(
  child: ChildProcess,
  label: string,
  originIn: (stdout: string) => string | undefined,
): Promise<RunningGateway> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start within 30 s: ${stdout}`));
    }, 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with code ${code} before listening: ${stdout}`));
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk;
      const origin = originIn(stdout);
      if (origin === undefined) return;
      clearTimeout(timer);
      child.stdout!.removeAllListeners("data").resume();
      resolve({
        label,
        origin,
        cpuMicros: async () => cpuMicrosOf(child.pid!),
        stop: () => stop(child),
      });
    });
  });
}

/** A process's CPU time from /proc (Linux), in µs; NaN where there is none. */
function cpuMicrosOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Waits (30 s at most) until a legacy session opens at `origin`. */
async function answering(origin: string): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const client = new Client(origin);
    try {
      const slot = await legacyWorkload.open(client);
      await slot.close();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.close();
    }
  }
}

/** The upstream reached directly: our client over stdio, `concurrency` calls in flight. */
export async function connectDirect(): Promise<{
  measure(concurrency: number, measureMs: number): Promise<RunResult>;
  close(): Promise<void>;
}> {
  const client = await McpClient.connect(stdio({ ...UPSTREAM, stderr: "inherit" }));
  const call = async () => {
    const result = await client.callTool("echo", { text: ECHO_TEXT });
    const block = result.content[0];
    if (block?.type !== "text" || block.text !== ECHO_TEXT) {
      throw new Error(`echo answered ${JSON.stringify(result).slice(0, 300)}`);
    }
  };
  const drive = async (concurrency: number, ms: number, latencies?: number[]) => {
    const until = performance.now() + ms;
    const loop = async () => {
      while (performance.now() < until) {
        const started = performance.now();
        await call();
        latencies?.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
  };
  return {
    async measure(concurrency, measureMs) {
      await drive(concurrency, 250);
      const latencies: number[] = [];
      const started = performance.now();
      await drive(concurrency, measureMs, latencies);
      const seconds = (performance.now() - started) / 1000;
      const sorted = Float64Array.from(latencies).sort();
      return {
        requests: latencies.length,
        seconds,
        rps: latencies.length / seconds,
        p50: quantile(sorted, 0.5),
        p99: quantile(sorted, 0.99),
        // No server process between the client and the upstream.
        cpuPerRequest: Number.NaN,
      };
    },
    close: () => client.close(),
  };
}
