import cluster, { type Worker } from "node:cluster";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { redisTopologyFromEnv } from "../shared/env.js";
import { type RedisServer, startRedisServer } from "../shared/redis-server.js";

// The Express example as a node:cluster of WORKERS processes on one PORT, sharing a Redis
// store: REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (see examples/shared/env.ts), or a
// redis-server of its own. See README.md beside this file.

const count = Number(process.env.WORKERS ?? 2);
if (!Number.isInteger(count) || count < 1) {
  console.error(`WORKERS must be a positive integer, got ${process.env.WORKERS}`);
  process.exit(1);
}
const port = process.env.PORT ?? "3000";
const host = process.env.HOST ?? "127.0.0.1";

let local: RedisServer | undefined;
const named = redisTopologyFromEnv();
let redisEnv: Record<string, string> = {};
for (const name of ["REDIS_URL", "REDIS_CLUSTER_NODES", "REDIS_SENTINELS", "REDIS_SENTINEL_NAME"]) {
  const value = process.env[name];
  if (value !== undefined) redisEnv[name] = value;
}
if (!named) {
  try {
    // Its own process group: a Ctrl+C reaches the workers, which close first; then Redis stops.
    local = await startRedisServer({ detached: true });
  } catch (error) {
    console.error(
      `Cannot start the cluster: no Redis is named (REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS) and ${(error as Error).message}.\n` +
        "Set REDIS_URL=redis://host:port, or install Redis so that redis-server is on PATH.",
    );
    process.exit(1);
  }
  redisEnv = { REDIS_URL: local.url };
  console.log(`Started redis-server on ${local.url} (stopped on exit)`);
}
const sharing =
  named?.kind === "cluster"
    ? "a Redis Cluster"
    : named?.kind === "sentinel"
      ? "a Sentinel-watched Redis"
      : (redisEnv.REDIS_URL ?? "");

// Every worker seals requestState with the same key; without MCP_SECRET, one made for this run.
const secret = process.env.MCP_SECRET ?? randomBytes(32).toString("base64url");
cluster.setupPrimary({ exec: fileURLToPath(new URL("./worker.ts", import.meta.url)) });

const live = new Set<Worker>();
const ready = new WeakSet<Worker>();
let listening = 0;
let stopping = false;
let exitCode = 0;

function fork(): void {
  live.add(cluster.fork({ ...redisEnv, MCP_SECRET: secret, PORT: port, HOST: host }));
}

cluster.on("listening", (worker, address) => {
  ready.add(worker);
  if (++listening !== count) return;
  // The port the workers share: with PORT=0 the first worker's listen picked a free one.
  const url = `http://${host}:${address.port}/mcp`;
  console.log(`${count} workers serving ${url}, sharing ${sharing}`);
  console.log("Each request may land on another worker; the x-served-by header says which:");
  console.log(
    `  curl -si ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: echo' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`,
  );
});

cluster.on("exit", (worker, code, signal) => {
  live.delete(worker);
  if (stopping) {
    if (live.size === 0) void finish();
    return;
  }
  const how = signal ?? `code ${code}`;
  if (!ready.has(worker)) {
    console.error(`Worker ${worker.process.pid} exited (${how}) before listening; stopping.`);
    void stop(1);
    return;
  }
  console.error(`Worker ${worker.process.pid} exited (${how}); starting a replacement.`);
  fork();
});

async function finish(): Promise<void> {
  await local?.close();
  process.exit(exitCode);
}

/** Asks every worker to close gracefully, then stops Redis; SIGKILLs stragglers after 10 s. */
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  if (live.size === 0) return finish();
  for (const worker of live) worker.process.kill("SIGTERM");
  setTimeout(() => {
    for (const worker of live) worker.process.kill("SIGKILL");
  }, 10_000).unref();
}

process.once("SIGINT", () => void stop(0));
process.once("SIGTERM", () => void stop(0));
for (let i = 0; i < count; i++) fork();
