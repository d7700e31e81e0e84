import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  type RedisServer,
  redisCommand,
  redisServerBinary,
  startRedisServer,
} from "./redis-server.js";

/** A throwaway Redis primary with one replica, watched by three Sentinels, all on loopback. */
export interface RedisSentinels {
  /** The name the Sentinels know the primary by (`REDIS_SENTINEL_NAME`). */
  readonly name: string;
  /** The Sentinels as ioredis takes them. */
  readonly sentinels: { host: string; port: number }[];
  /** `127.0.0.1:<port>,…`, as `REDIS_SENTINELS` takes it. */
  readonly spec: string;
  /** The two data nodes, the first primary at the start (roles change with failovers). */
  readonly nodes: readonly RedisServer[];
  /** The data node that is the primary now, as the Sentinels see it. */
  primary(): Promise<RedisServer>;
  /**
   * `SENTINEL FAILOVER`: the Sentinels promote the replica and demote the primary, with no
   * agreement needed. Resolves to the new primary once every Sentinel names it and the old one
   * replicates from it.
   */
  failover(): Promise<RedisServer>;
  /** Stops the Sentinels and both nodes, and removes their folders. */
  close(): Promise<void>;
}

/** Options of {@link startRedisSentinels}. */
export interface RedisSentinelsOptions {
  /** @default "mymaster" */
  name?: string;
}

const DEADLINE_MS = 30_000;

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Redis Sentinel: ${what} did not happen in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What `INFO sentinel` says of the watched primary: its port, replicas and Sentinels. */
async function sentinelView(port: number) {
  const info = await redisCommand(port, "INFO sentinel");
  const line =
    /master0:name=[^,]+,status=(\w+),address=[^:]+:(\d+),slaves=(\d+),sentinels=(\d+)/.exec(info);
  if (!line) return undefined;
  return {
    status: line[1],
    primary: Number(line[2]),
    replicas: Number(line[3]),
    sentinels: Number(line[4]),
  };
}

async function linkedToPrimary(node: RedisServer): Promise<boolean> {
  return (await redisCommand(node.port, "INFO replication")).includes("master_link_status:up");
}

/** Starts one Sentinel from a generated sentinel.conf in its own folder (it rewrites the file). */
async function startSentinel(binary: string, primary: number, name: string) {
  const dir = await mkdtemp(join(tmpdir(), "mcp-mount-sentinel-"));
  const port = await freePort();
  const conf = join(dir, "sentinel.conf");
  await writeFile(
    conf,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primary} 2`,
      // A lost primary is noticed within a second, so an unplanned failover takes seconds.
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 10000`,
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(binary, [conf, "--sentinel"], { stdio: "ignore" });
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    }
    process.off("exit", kill);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await until("a Sentinel's start", async () => (await redisCommand(port, "PING")) === "+PONG");
  } catch (error) {
    await close();
    throw error;
  }
  return { port, close };
}

/**
 * Starts a primary and its replica ({@link startRedisServer}: no persistence, loopback, free
 * ports) and three Sentinels watching them (quorum 2). Resolves once every Sentinel sees the
 * primary, its replica and the two other Sentinels.
 */
export async function startRedisSentinels(
  options: RedisSentinelsOptions = {},
): Promise<RedisSentinels> {
  const name = options.name ?? "mymaster";
  const binary = redisServerBinary();
  if (!binary) throw new Error("there is no redis-server on PATH: install Redis");
  const nodes: RedisServer[] = [];
  const sentinels: Awaited<ReturnType<typeof startSentinel>>[] = [];
  const close = async () => {
    await Promise.all(sentinels.map((sentinel) => sentinel.close()));
    await Promise.all(nodes.map((node) => node.close()));
  };
  try {
    nodes.push(await startRedisServer(), await startRedisServer());
    const [primary, replica] = nodes as [RedisServer, RedisServer];
    const reply = await redisCommand(replica.port, `REPLICAOF 127.0.0.1 ${primary.port}`);
    if (reply !== "+OK") throw new Error(`REPLICAOF: ${reply}`);
    await until("the replica's sync", () => linkedToPrimary(replica));
    for (let i = 0; i < 3; i++) sentinels.push(await startSentinel(binary, primary.port, name));
    await until("the Sentinels' discovery", async () => {
      const views = await Promise.all(sentinels.map((sentinel) => sentinelView(sentinel.port)));
      return views.every((view) => view?.replicas === 1 && view.sentinels === 3);
    });
  } catch (error) {
    await close();
    throw error;
  }

  const primaryNow = async () => {
    const view = await sentinelView(sentinels[0]!.port);
    const node = nodes.find((candidate) => candidate.port === view?.primary);
    if (!node) throw new Error("the Sentinels name no primary");
    return node;
  };
  return {
    name,
    sentinels: sentinels.map((sentinel) => ({ host: "127.0.0.1", port: sentinel.port })),
    spec: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(","),
    nodes,
    primary: primaryNow,
    async failover() {
      const old = await primaryNow();
      const next = nodes.find((node) => node !== old)!;
      const reply = await redisCommand(sentinels[0]!.port, `SENTINEL FAILOVER ${name}`);
      if (reply !== "+OK") throw new Error(`SENTINEL FAILOVER: ${reply}`);
      await until("every Sentinel's switch to the new primary", async () => {
        const views = await Promise.all(sentinels.map((sentinel) => sentinelView(sentinel.port)));
        return views.every((view) => view?.primary === next.port);
      });
      await until("the old primary's sync as a replica", () => linkedToPrimary(old));
      return next;
    },
    close,
  };
}
