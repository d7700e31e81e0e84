import { type ChildProcess, spawn } from "node:child_process";
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream";
import { fileURLToPath } from "node:url";
import { type RedisCluster, startRedisCluster } from "../../examples/shared/redis-cluster.js";
import { type RedisServer, startRedisServer } from "./redis-server.js";
import { SseReader } from "./stream.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXIT_WITH_PARENT = fileURLToPath(new URL("./exit-with-parent.ts", import.meta.url));

/** What each server process runs, and how it says it listens. */
export interface ClusterServer {
  /** The script, run with `node --import tsx` from the repository root. */
  script: string;
  /**
   * Extra environment; `PORT=0` and the cluster's Redis (`REDIS_URL`, or `REDIS_CLUSTER_NODES` on
   * a Redis Cluster) are always set.
   */
  env?: Record<string, string>;
  /** Extra Node options before the script (a benchmark's `--cpu-prof`). */
  execArgv?: string[];
  /** Matches the output line printed once the process listens; its first group is the port. */
  listening: RegExp;
}

/** test/helpers/cluster-server.ts: the fixture server plus the tools the cluster tests use. */
export const FIXTURE_SERVER: ClusterServer = {
  script: fileURLToPath(new URL("./cluster-server.ts", import.meta.url)),
  listening: /^listening (\d+)$/m,
};

/** The response header naming the backend (its index) that served a request through the proxy. */
export const BACKEND_HEADER = "x-cluster-backend";

/** The index of the backend that served a response through the proxy. */
export function servedBy(response: { headers: Headers }): number {
  const index = response.headers.get(BACKEND_HEADER);
  if (index === null) throw new Error(`No ${BACKEND_HEADER} header: not through the proxy?`);
  return Number(index);
}

/** A response whose body is read as SSE while it arrives. */
export interface OpenStream {
  response: Response;
  reader: SseReader;
}

/** Sends a request whose answer is an SSE stream that stays open, such as a listen or GET. */
export async function openStream(url: string, init: RequestInit): Promise<OpenStream> {
  const response = await fetch(url, init);
  if (!response.body)
    throw new Error(`${init.method ?? "GET"} answered ${response.status} without a body`);
  return { response, reader: new SseReader(response.body) };
}

/** One server process behind the proxy. */
export interface Backend {
  readonly index: number;
  /** Its own endpoint, `http://127.0.0.1:<port>/mcp`, for requests that bypass the proxy. */
  readonly url: string;
  readonly pid: number;
  /** False once killed: the proxy skips it. */
  readonly alive: boolean;
  /** SIGKILLs the process (a crash, not a shutdown); the proxy stops routing to it first. */
  kill(): Promise<void>;
  /**
   * SIGTERMs the process (a graceful shutdown, as an orchestrator does) and waits until it
   * exits; SIGKILL after `graceMs`. The proxy stops routing to it first, or `routeForMs` after
   * the signal (a load balancer that learns late). @default graceMs 5_000, routeForMs 0
   */
  terminate(graceMs?: number, routeForMs?: number): Promise<void>;
  /** Starts it again, on a new port, and routes to it again. */
  restart(): Promise<void>;
}

/** What the proxy did with one incoming request. */
export interface ProxyLogEntry {
  method: string;
  /** Index of the backend it went to; undefined when none was alive. */
  backend: number | undefined;
  /** Its `Mcp-Session-Id` header, if any. */
  session: string | undefined;
}

/** A running cluster: Redis, the server processes and the round-robin proxy in front of them. */
export interface Cluster {
  /** The proxy's endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly backends: readonly Backend[];
  /** The one Redis node the processes share (topology `"standalone"`). */
  readonly redis: RedisServer;
  /** The Redis Cluster the processes share (topology `"cluster"`). */
  readonly redisCluster: RedisCluster | undefined;
  /** Every request the proxy received, in arrival order. */
  readonly proxyLog: ProxyLogEntry[];
  /** Stops the proxy, every server process (its whole process group) and Redis. */
  stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Number of server processes. @default 3 */
  processes?: number;
  /** What each process runs. @default FIXTURE_SERVER */
  server?: ClusterServer;
  /** Longest wait for one process to print its port. @default 30_000 */
  startTimeoutMs?: number;
  /**
   * What the processes share: one Redis node, or a Redis Cluster of three masters with a replica
   * each (examples/shared/redis-cluster.ts). @default "standalone"
   */
  topology?: RedisTopology;
}

/** The Redis a cluster of processes shares. */
export type RedisTopology = "standalone" | "cluster";

/** Running process groups, killed synchronously if the test process exits without stop(). */
const groups = new Set<number>();
process.once("exit", () => {
  for (const pid of groups) killGroup(pid, "SIGKILL");
});

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Ends a process group: SIGTERM, then SIGKILL after `graceMs`. */
async function endGroup(child: ChildProcess, graceMs: number): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    killGroup(pid, graceMs > 0 ? "SIGTERM" : "SIGKILL");
    if (!(await exited(child, graceMs))) {
      killGroup(pid, "SIGKILL");
      await exited(child, 5_000);
    }
  }
  // Anything the process left behind in its group goes too.
  killGroup(pid, "SIGKILL");
  groups.delete(pid);
}

/**
 * A tiny process that shuts our Redis down if we die without stop() (SIGKILL, or a SIGTERM
 * that skips exit hooks): it waits for its stdin pipe from us to break. By port, not pid, so
 * it can never hit an unrelated process; SHUTDOWN only means something to a Redis.
 */
function guardRedis(port: number): ChildProcess {
  const script = `process.stdin.on("end", () => {
    const socket = require("node:net").connect(${port}, "127.0.0.1", () => socket.end("SHUTDOWN NOSAVE\\r\\n"));
    socket.on("close", () => process.exit()).on("error", () => process.exit());
    setTimeout(() => process.exit(), 2000);
  }).resume();`;
  const guard = spawn(process.execPath, ["-e", script], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  });
  if (guard.pid !== undefined) groups.add(guard.pid);
  return guard;
}

/** Spawns one server process in its own process group; resolves once it listens. */
async function spawnServer(
  server: ClusterServer,
  redisEnv: Record<string, string>,
  timeoutMs: number,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [...(server.execArgv ?? []), "--import", "tsx", "--import", EXIT_WITH_PARENT, server.script],
    {
      cwd: ROOT,
      env: { ...process.env, ...server.env, ...redisEnv, PORT: "0" },
      // stdin stays open: the server exits when it closes (exit-with-parent.ts), so it never
      // outlives us.
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    },
  );
  if (child.pid !== undefined) groups.add(child.pid);
  let output = "";
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`did not listen within ${timeoutMs} ms`)),
        timeoutMs,
      );
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = server.listening.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`exited (${code ?? signal}) before listening`));
      });
    });
    // Drain the pipes from now on, so a chatty server never blocks on a full pipe. With
    // CLUSTER_LOG_DIR set (when chasing a failure), each process's output goes to <pid>.log there.
    if (process.env.CLUSTER_LOG_DIR) {
      const { createWriteStream } = await import("node:fs");
      const file = createWriteStream(`${process.env.CLUSTER_LOG_DIR}/${child.pid}.log`);
      file.write(output);
      child.stdout?.pipe(file);
      child.stderr?.pipe(file);
    }
    child.stdout?.resume();
    child.stderr?.resume();
    return { child, port };
  } catch (error) {
    await endGroup(child, 0);
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${server.script} ${reason}. Output:\n${output}`);
  }
}

function createBackend(
  index: number,
  server: ClusterServer,
  redisEnv: Record<string, string>,
  timeoutMs: number,
) {
  let child: ChildProcess | undefined;
  let port = 0;
  let alive = false;
  const backend = {
    index,
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    get port() {
      return port;
    },
    get pid() {
      return child?.pid ?? 0;
    },
    get alive() {
      return alive;
    },
    async start() {
      ({ child, port } = await spawnServer(server, redisEnv, timeoutMs));
      alive = true;
    },
    async kill() {
      alive = false;
      if (child) await endGroup(child, 0);
    },
    async terminate(graceMs = 5_000, routeForMs = 0) {
      const unroute = setTimeout(() => (alive = false), routeForMs);
      if (child) await endGroup(child, graceMs);
      clearTimeout(unroute);
      alive = false;
    },
    async restart() {
      await backend.kill();
      await backend.start();
    },
    async stop() {
      alive = false;
      if (child) await endGroup(child, 3_000);
    },
  };
  return backend;
}

type InternalBackend = ReturnType<typeof createBackend>;

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
]);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase());
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.includes(name)) out[name] = value;
  }
  return out;
}

function proxyError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message } }));
}

/**
 * A reverse proxy that sends each request to the next live backend in turn, with no
 * stickiness: a request's body is read whole first (so that a refused one can go to the next
 * backend), and responses stream back (SSE included) without buffering.
 */
async function startProxy(backends: readonly InternalBackend[], log: ProxyLogEntry[]) {
  const agent = new Agent({ keepAlive: true });
  let turn = 0;
  const pick = (): InternalBackend | undefined => {
    for (let tries = 0; tries < backends.length; tries++) {
      const backend = backends[turn++ % backends.length];
      if (backend?.alive) return backend;
    }
    return undefined;
  };

  // As a load balancer does (nginx's `proxy_next_upstream error`): a backend that refuses the
  // connection (its listener closed while it drains, say) saw nothing of the request, which is
  // sent to the next live one. The body is read first, so it can be sent again.
  const send = (
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    backend: InternalBackend,
    refused: number,
    entry: ProxyLogEntry,
  ) => {
    entry.backend = backend.index;
    const upstream = httpRequest({
      host: "127.0.0.1",
      port: backend.port,
      method: req.method,
      path: req.url,
      headers: endToEnd(req.headers),
      agent,
    });
    upstream.on("response", (response) => {
      res.writeHead(response.statusCode ?? 502, response.statusMessage, {
        ...endToEnd(response.headers),
        [BACKEND_HEADER]: String(backend.index),
      });
      res.flushHeaders();
      // Ends or destroys both sides together: a client that goes away cancels upstream, and
      // a backend that dies mid-stream cuts the client's connection.
      pipeline(response, res, () => undefined);
    });
    upstream.on("error", (error) => {
      const next = refused + 1 < backends.length ? pick() : undefined;
      if ((error as NodeJS.ErrnoException).code === "ECONNREFUSED" && next && !res.headersSent)
        send(req, body, res, next, refused + 1, entry);
      else if (res.headersSent) res.destroy();
      else proxyError(res, 502, `Backend ${backend.index} failed: ${error.message}`);
    });
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  };

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const backend = pick();
    const session = req.headers["mcp-session-id"];
    const entry: ProxyLogEntry = {
      method: req.method ?? "GET",
      backend: backend?.index,
      session: typeof session === "string" ? session : undefined,
    };
    log.push(entry);
    if (!backend) {
      req.resume();
      proxyError(res, 503, "No backend is alive");
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => send(req, Buffer.concat(chunks), res, backend, 0, entry));
    req.on("error", () => undefined); // the client went away
  };

  const server = createServer(forward);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/**
 * Starts a private Redis (one node, or a Redis Cluster), `processes` servers sharing it
 * (test/helpers/cluster-server.ts unless `server` says otherwise; each its own process group),
 * and a round-robin proxy in front of them.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const count = options.processes ?? 3;
  const onCluster = options.topology === "cluster";
  const redisCluster = onCluster ? await startRedisCluster() : undefined;
  const redis = onCluster ? undefined : await startRedisServer();
  const guards = (redisCluster?.nodes ?? (redis ? [redis] : [])).map((node) =>
    guardRedis(node.port),
  );
  const redisEnv: Record<string, string> = redisCluster
    ? { REDIS_CLUSTER_NODES: redisCluster.spec }
    : { REDIS_URL: redis!.url };
  const backends = Array.from({ length: count }, (_, index) =>
    createBackend(
      index,
      options.server ?? FIXTURE_SERVER,
      redisEnv,
      options.startTimeoutMs ?? 30_000,
    ),
  );
  let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
  const stop = async () => {
    await proxy?.close();
    await Promise.all(backends.map((backend) => backend.stop()));
    await redis?.close();
    await redisCluster?.close();
    for (const guard of guards) await endGroup(guard, 0);
  };
  try {
    const started = await Promise.allSettled(backends.map((backend) => backend.start()));
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    const log: ProxyLogEntry[] = [];
    proxy = await startProxy(backends, log);
    const standalone = () => {
      if (!redis) throw new Error("this cluster of processes shares a Redis Cluster, not one node");
      return redis;
    };
    return {
      url: proxy.url,
      backends,
      get redis() {
        return standalone();
      },
      redisCluster,
      proxyLog: log,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
