import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A private `redis-server` on a free loopback port; never the one that may run on 6379. */
export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the server (an outage); `start()` brings it back on the same port, empty. */
  stop(): Promise<void>;
  /** Starts the server again after `stop()`. */
  start(): Promise<void>;
  /** Stops the server for good and removes its directory. */
  close(): Promise<void>;
}

/** A loopback port free right now, for a server that must be told its port up front. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Run as a one-node Redis Cluster owning every slot, so cross-slot commands fail as in production. */
  cluster?: boolean;
  /**
   * Run in its own process group, so a Ctrl+C in the terminal reaches the app but not Redis
   * (the app closes its connections, then stops Redis). @default false
   */
  detached?: boolean;
}

/** Sends one inline command; resolves to its whole reply (a line, or a bulk string's body). */
function command(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let reply = "";
    socket.setTimeout(2_000, () => socket.destroy(new Error(`no reply to ${line}`)));
    socket.once("error", reject);
    socket.once("connect", () => socket.write(`${line}\r\n`));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      const end = reply.indexOf("\r\n");
      if (end === -1) return;
      const bulk = reply.startsWith("$") ? Number(reply.slice(1, end)) : -1;
      if (bulk >= 0 && reply.length < end + 2 + bulk) return;
      socket.destroy();
      resolve(bulk >= 0 ? reply.slice(end + 2, end + 2 + bulk) : reply.slice(0, end));
    });
  });
}

/** True when something on `port` answers PING with PONG. */
async function answersPing(port: number): Promise<boolean> {
  return (await command(port, "PING").catch(() => "")) === "+PONG";
}

/**
 * Starts a throwaway `redis-server` (binary on PATH) bound to 127.0.0.1, without persistence,
 * in a temporary directory; killed if this process exits without `close()`.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-mount-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const killOnExit = () => child?.kill("SIGKILL");
  process.once("exit", killOnExit);

  const start = async () => {
    if (child) throw new Error("redis-server is already running");
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ];
    if (options.cluster) {
      // A fresh node each start, as after losing a node's state; nodes.conf goes in `dir`.
      await rm(join(dir, "nodes.conf"), { force: true });
      args.push("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf");
      args.push("--cluster-announce-ip", "127.0.0.1");
    }
    const spawned = spawn("redis-server", [...args, "--dir", dir], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: options.detached ?? false,
    });
    child = spawned;
    let output = "";
    spawned.stdout?.on("data", (chunk) => (output += chunk));
    spawned.stderr?.on("data", (chunk) => (output += chunk));
    let failure: Error | undefined;
    spawned.once("error", (error: NodeJS.ErrnoException) => {
      failure =
        error.code === "ENOENT" ? new Error("there is no redis-server binary on PATH") : error;
    });
    spawned.once("exit", (code) => (failure ??= new Error(`redis-server exited (${code})`)));
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (failure || Date.now() > deadline) {
        spawned.kill("SIGKILL");
        child = undefined;
        const reason = failure?.message ?? "no PONG within 10 s";
        throw new Error(`redis-server did not start on port ${port}: ${reason}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (options.cluster) {
      const added = await command(port, "CLUSTER ADDSLOTSRANGE 0 16383");
      if (added !== "+OK") throw new Error(`CLUSTER ADDSLOTSRANGE: ${added}`);
      while (!(await command(port, "CLUSTER INFO")).includes("cluster_state:ok")) {
        if (Date.now() > deadline) throw new Error("the one-node cluster did not become ok");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };

  const stop = async () => {
    const running = child;
    if (!running) return;
    child = undefined;
    const gone = exited(running);
    running.kill("SIGTERM");
    const timer = setTimeout(() => running.kill("SIGKILL"), 5_000);
    await gone;
    clearTimeout(timer);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    async close() {
      await stop();
      process.off("exit", killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
