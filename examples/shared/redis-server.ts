import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** A private `redis-server` on a free loopback port; never the one that may run on 6379. */
export interface RedisServer {
  readonly port: number;
  /** The cluster bus port of a cluster node (`cluster` set); undefined otherwise. */
  readonly busPort: number | undefined;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /**
   * Stops the server (an outage); `start()` brings it back on the same port, empty. A SIGTERM:
   * Redis 7 then waits (up to `shutdown-timeout`) for its replicas to catch up, so nothing
   * acknowledged is lost and a Cluster master's replicas hold all of its writes.
   */
  stop(): Promise<void>;
  /**
   * Crashes the server (SIGKILL): no goodbye to clients or replicas, and writes its replicas had
   * not received yet are gone, as when a machine dies. `start()` brings it back, empty.
   */
  kill(): Promise<void>;
  /** Starts the server again after `stop()` or `kill()`. */
  start(): Promise<void>;
  /** Stops the server for good and removes its directory. */
  close(): Promise<void>;
}

/** The executable called `name` in one of PATH's folders, as a shell would find it. */
export function findOnPath(name: string, path = process.env.PATH ?? ""): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/**
 * The Redis server binary to start: `REDIS_SERVER` when set, else `redis-server` on PATH,
 * else Valkey's `valkey-server` (same flags, same protocol); undefined when there is none.
 */
export function redisServerBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.REDIS_SERVER) return env.REDIS_SERVER;
  return findOnPath("redis-server", env.PATH) ?? findOnPath("valkey-server", env.PATH);
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

/** A free loopback port other than `taken` (the kernel may hand the same one out twice). */
async function freePortBut(taken: number): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port !== taken) return port;
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /**
   * `true`: a one-node Redis Cluster owning every slot (fresh at each start), so cross-slot
   * commands fail as in production. `"member"`: a cluster node that owns nothing until it is
   * joined to others (see redis-cluster.ts); it keeps its identity across `stop()`/`start()`,
   * so a restarted master rejoins, as a replica of whoever took over.
   */
  cluster?: boolean | "member";
  /**
   * Run in its own process group, so a Ctrl+C in the terminal reaches the app but not Redis
   * (the app closes its connections, then stops Redis). @default false
   */
  detached?: boolean;
}

/** Sends one inline command; resolves to its whole reply (a line, or a bulk string's body). */
export function redisCommand(port: number, line: string): Promise<string> {
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
  return (await redisCommand(port, "PING").catch(() => "")) === "+PONG";
}

/** True when the server on `port` is the process `pid`. */
async function isProcess(port: number, pid: number | undefined): Promise<boolean> {
  const info = await redisCommand(port, "INFO server").catch(() => "");
  return pid !== undefined && new RegExp(`^process_id:${pid}\\r?$`, "m").test(info);
}

/**
 * Starts a throwaway `redis-server` ({@link redisServerBinary}) bound to 127.0.0.1, without
 * persistence, in a temporary directory; killed if this process exits without `close()`.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = redisServerBinary();
  if (!binary) {
    throw new Error(
      "there is no redis-server (or valkey-server) on PATH: install Redis, or set REDIS_SERVER",
    );
  }
  const dir = await mkdtemp(join(tmpdir(), "mcp-mount-redis-"));
  let port = await freePort();
  let busPort = options.cluster ? await freePortBut(port) : undefined;
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
      // A one-node cluster is fresh each start, as after losing a node's state; a member keeps
      // its nodes.conf (in `dir`) and so its identity.
      if (options.cluster === true) await rm(join(dir, "nodes.conf"), { force: true });
      args.push("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf");
      args.push("--cluster-announce-ip", "127.0.0.1");
      // The bus port is one we know is free (not port + 10000), and a lost master is noticed
      // within a second, so failover tests take seconds, not the default 15 s.
      args.push("--cluster-port", String(busPort), "--cluster-node-timeout", "1000");
    }
    const spawned = spawn(binary, [...args, "--dir", dir], {
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
        error.code === "ENOENT" ? new Error(`there is no Redis server binary at ${binary}`) : error;
    });
    // "close", not "exit": by then its output is all read, so the reason is in it.
    spawned.once("close", (code) => (failure ??= new Error(`redis-server exited (${code})`)));
    const deadline = Date.now() + 10_000;
    // Ours, not another server that took the port first (ours then exits: a clash to retry).
    while (!(await answersPing(port)) || !(await isProcess(port, spawned.pid))) {
      if (failure || Date.now() > deadline) {
        spawned.kill("SIGKILL");
        child = undefined;
        const reason = failure?.message ?? "no PONG within 10 s";
        throw new Error(`redis-server did not start on port ${port}: ${reason}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (options.cluster === true) {
      const added = await redisCommand(port, "CLUSTER ADDSLOTSRANGE 0 16383");
      if (added !== "+OK") throw new Error(`CLUSTER ADDSLOTSRANGE: ${added}`);
      while (!(await redisCommand(port, "CLUSTER INFO")).includes("cluster_state:ok")) {
        if (Date.now() > deadline) throw new Error("the one-node cluster did not become ok");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };

  const end = async (signal: "SIGTERM" | "SIGKILL") => {
    const running = child;
    if (!running) return;
    child = undefined;
    const gone = exited(running);
    running.kill(signal);
    const timer = setTimeout(() => running.kill("SIGKILL"), 5_000);
    await gone;
    clearTimeout(timer);
  };
  const stop = () => end("SIGTERM");

  try {
    // A port free when probed can be taken before Redis binds it (by another test's server or
    // an outgoing connection): the first start tries fresh ports a few times. Later starts keep
    // theirs, as a restarted server must.
    for (let attempt = 1; ; attempt++) {
      try {
        await start();
        break;
      } catch (error) {
        if (attempt === 5 || !String(error).includes("Address already in use")) throw error;
        port = await freePort();
        busPort = options.cluster ? await freePortBut(port) : undefined;
      }
    }
  } catch (error) {
    process.off("exit", killOnExit);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    busPort,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    kill: () => end("SIGKILL"),
    async close() {
      await stop();
      process.off("exit", killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
