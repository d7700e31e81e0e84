import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { Client } from "undici";
import type { Contender } from "./contenders.js";
import { MCP_PATH, verifyEchoResponse } from "./request.js";
import type { CpuMessage, ReadyMessage } from "./servers/serve.js";

/** A contender running in its own process, so it never shares an event loop with the load. */
export interface RunningServer {
  contender: Contender;
  origin: string;
  pid: number;
  /** The server process's CPU time so far (user + system), in microseconds. */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

const TSX = import.meta.resolve("tsx");
const START_TIMEOUT_MS = 30_000;

/**
 * Node flags for the server processes only (BENCH_SERVER_FLAGS, space-separated), e.g.
 * `--trace-gc-nvp` to see each server's garbage collections apart from the load generator's.
 */
function serverFlags(): string[] {
  return (process.env.BENCH_SERVER_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
}

/** Starts `contender` in a child process and resolves once it listens on loopback. */
export async function startServer(
  contender: Contender,
  options: { cpuProfDir?: string } = {},
): Promise<RunningServer> {
  const profile = options.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`] : [];
  const child = fork(contender.entry, [], {
    execArgv: ["--import", TSX, ...profile, ...serverFlags()],
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await waitForPort(child, contender.label);
  return {
    contender,
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async cpuMicros() {
      const reply = once(child, "message");
      child.send("cpu");
      const [message] = (await reply) as [CpuMessage];
      return message.cpuMicros;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.send("stop");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function waitForPort(child: ChildProcess, label: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once("message", (message: ReadyMessage) => {
      clearTimeout(timer);
      resolve(message.port);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with code ${code} before listening`));
    });
  });
}

/**
 * Sets up one slot of the contender's workload (a legacy session), sends one tools/call, and
 * throws unless the answer is a correct echo result.
 */
export async function verifyServer(server: RunningServer): Promise<void> {
  const id = 424242;
  const { workload, label } = server.contender;
  const client = new Client(server.origin);
  try {
    const slot = await workload.open(client);
    const response = await client.request({
      path: MCP_PATH,
      method: "POST",
      headers: slot.headers,
      body: workload.body(id),
    });
    const text = await response.body.text();
    const contentType = String(response.headers["content-type"] ?? "");
    verifyEchoResponse(id, response.statusCode, contentType, text);
    await slot.close();
  } catch (error) {
    throw new Error(`${label} failed its tools/call check`, { cause: error });
  } finally {
    await client.close();
  }
}
