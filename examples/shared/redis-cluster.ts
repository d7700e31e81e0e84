import { connect } from "node:net";
import { type RedisServer, redisCommand, startRedisServer } from "./redis-server.js";

/** A throwaway multi-node Redis Cluster on loopback: masters sharing the slots, each with replicas. */
export interface RedisCluster {
  /** Every node, masters first (as started; roles change with failovers). */
  readonly nodes: readonly RedisServer[];
  /** The nodes as ioredis `Cluster` takes them. */
  readonly startupNodes: { host: string; port: number }[];
  /** `127.0.0.1:<port>,…`, as `REDIS_CLUSTER_NODES` takes it. */
  readonly spec: string;
  /** The nodes that are masters now. */
  masters(): Promise<RedisServer[]>;
  /**
   * Ends a master (a crash unless `crash: false`), waits until one of its replicas has taken its
   * slots and the cluster is whole again, then starts the old master back, empty, and it rejoins
   * as a replica. Resolves to the promoted node. A function is taken as `{ onStopped }`.
   */
  failover(
    master: RedisServer,
    options?: FailoverOptions | FailoverOptions["onStopped"],
  ): Promise<RedisServer>;
  /** The master that owns `slot` now. */
  masterOf(slot: number): Promise<RedisServer>;
  /**
   * Moves `slot` to the master `to` while clients use it, as `redis-cli --cluster reshard` does
   * (https://redis.io/docs/latest/commands/cluster-setslot/): the target IMPORTING, the source
   * MIGRATING, its keys MIGRATEd in batches (clients meet ASK), then `NODE` on the target, the
   * source and the other masters (clients meet MOVED). Resolves once every node sees `to` as
   * the owner.
   */
  migrateSlot(slot: number, to: RedisServer, options?: MigrateOptions): Promise<MigratedSlot>;
  /** Stops every node and removes their folders. */
  close(): Promise<void>;
}

/** Options of {@link RedisCluster.migrateSlot}. */
export interface MigrateOptions {
  /** Keys per MIGRATE. @default 100 */
  batch?: number;
  /**
   * Runs once every key is on the target, before the slot is handed over: traffic from then on
   * meets ASK redirections until it resolves.
   */
  onKeysMoved?: () => Promise<void> | void;
}

/** What {@link RedisCluster.migrateSlot} did. */
export interface MigratedSlot {
  from: RedisServer;
  /** Keys MIGRATEd (a key written to the target meanwhile is not counted). */
  keys: number;
}

/** Options of {@link RedisCluster.failover}. */
export interface FailoverOptions {
  /**
   * SIGKILL the master, as a crash: writes its replica had not received are lost, and the
   * replica takes over only once the master is seen failing (`cluster-node-timeout`). `false`:
   * a SIGTERM, on which Redis 7 first lets its replicas catch up. @default true
   */
  crash?: boolean;
  /**
   * Runs once the master is down, before any replica took over: traffic from then on meets the
   * outage.
   */
  onStopped?: () => void;
}

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** @default 3 */
  masters?: number;
  /** Replicas of each master. @default 1 */
  replicasPerMaster?: number;
}

const SLOTS = 16_384;
const DEADLINE_MS = 30_000;

/** Polls `check` until it holds; throws `what` after the deadline. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} did not happen in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One line of CLUSTER NODES: id, port, flags and, for a replica, its master's id. */
interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  master: string;
  /** Its slot ranges (`0-5460`, `42`) and, on the node itself, slots migrating (`[42->-id]`). */
  slots: string[];
}

async function clusterNodes(node: RedisServer): Promise<NodeLine[]> {
  const text = await redisCommand(node.port, "CLUSTER NODES");
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [id = "", address = "", flags = "", master = "", ...rest] = line.split(" ");
      const port = Number(address.split("@")[0]?.split(":")[1]);
      return { id, port, flags: flags.split(","), master, slots: rest.slice(4) };
    });
}

/** A RESP reply: a simple or bulk string, an integer, nil, an error, or an array of replies. */
type Reply = string | number | null | Error | Reply[];

/** Parses one RESP reply at `at`; undefined while `text` holds only part of it. */
function parseReply(text: string, at = 0): { reply: Reply; end: number } | undefined {
  const eol = text.indexOf("\r\n", at);
  if (eol === -1) return undefined;
  const head = text.slice(at + 1, eol);
  const next = eol + 2;
  switch (text[at]) {
    case "+":
      return { reply: head, end: next };
    case "-":
      return { reply: new Error(head), end: next };
    case ":":
      return { reply: Number(head), end: next };
    case "$": {
      const length = Number(head);
      if (length < 0) return { reply: null, end: next };
      if (Buffer.byteLength(text.slice(next)) < length + 2) return undefined;
      const body = Buffer.from(text.slice(next)).subarray(0, length).toString();
      return { reply: body, end: next + body.length + 2 };
    }
    case "*": {
      const count = Number(head);
      if (count < 0) return { reply: null, end: next };
      const items: Reply[] = [];
      let end = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(text, end);
        if (!item) return undefined;
        items.push(item.reply);
        end = item.end;
      }
      return { reply: items, end };
    }
    default:
      throw new Error(`not a RESP reply: ${text.slice(at, at + 40)}`);
  }
}

/**
 * Sends one command as a RESP array, so an argument may be empty or hold spaces (MIGRATE's
 * `""` key, any key name), and resolves to its whole reply, arrays included.
 */
function command(port: number, args: readonly string[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let text = "";
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no reply to ${args[0]}`)));
    socket.once("error", reject);
    socket.once("connect", () => {
      const parts = args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
      socket.write(`*${args.length}\r\n${parts.join("")}`);
    });
    socket.on("data", (chunk) => {
      text += chunk.toString();
      const parsed = parseReply(text);
      if (!parsed) return;
      socket.destroy();
      resolve(parsed.reply);
    });
  });
}

/** Sends `args` to the node on `port`; throws when it answers with an error. */
async function expectOk(port: number, args: readonly string[]): Promise<Reply> {
  const reply = await command(port, args);
  if (reply instanceof Error) throw new Error(`${args.join(" ")} on ${port}: ${reply.message}`);
  return reply;
}

/** Whether the slot ranges of a CLUSTER NODES line (its fields from the ninth) hold `slot`. */
function ownsSlot(ranges: readonly string[], slot: number): boolean {
  return ranges.some((range) => {
    if (range.startsWith("[")) return false; // a migration in progress, not ownership
    const [from, to = from] = range.split("-").map(Number);
    return from !== undefined && to !== undefined && slot >= from && slot <= to;
  });
}

async function clusterOk(node: RedisServer): Promise<boolean> {
  return (await redisCommand(node.port, "CLUSTER INFO")).includes("cluster_state:ok");
}

async function linkedToMaster(node: RedisServer): Promise<boolean> {
  return (await redisCommand(node.port, "INFO replication")).includes("master_link_status:up");
}

/**
 * Starts a Redis Cluster of `masters` masters with `replicasPerMaster` replicas each, every node
 * a private `redis-server` on a free loopback port, joined with plain cluster commands (no
 * redis-cli needed). Resolves once every node sees the cluster as ok and every replica syncs.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masterCount = options.masters ?? 3;
  const perMaster = options.replicasPerMaster ?? 1;
  const total = masterCount * (1 + perMaster);
  const started = await Promise.allSettled(
    Array.from({ length: total }, () => startRedisServer({ cluster: "member" })),
  );
  const nodes = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const closeAll = () => Promise.all(nodes.map((node) => node.close())).then(() => undefined);
  try {
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    await join(nodes, masterCount);
  } catch (error) {
    await closeAll();
    throw error;
  }

  const live = new Set(nodes);
  const cluster: RedisCluster = {
    nodes,
    startupNodes: nodes.map((node) => ({ host: "127.0.0.1", port: node.port })),
    spec: nodes.map((node) => `127.0.0.1:${node.port}`).join(","),
    async masters() {
      const someone = [...live][0];
      if (!someone) return [];
      const lines = await clusterNodes(someone);
      const ports = new Set(
        lines
          .filter((line) => line.flags.includes("master") && !line.flags.includes("fail"))
          .map((line) => line.port),
      );
      return nodes.filter((node) => live.has(node) && ports.has(node.port));
    },
    async failover(master, options = {}) {
      const { crash = true, onStopped } =
        typeof options === "function" ? { onStopped: options } : options;
      const lines = await clusterNodes(master);
      const id = lines.find((line) => line.flags.includes("myself"))?.id;
      const replicaPorts = new Set(
        lines.filter((line) => line.master === id).map((line) => line.port),
      );
      const replicas = nodes.filter((node) => replicaPorts.has(node.port));
      if (replicas.length === 0) throw new Error(`no replica of the master on ${master.port}`);
      live.delete(master);
      await (crash ? master.kill() : master.stop());
      onStopped?.();
      let promoted: RedisServer | undefined;
      await until("a replica's promotion", async () => {
        for (const replica of replicas) {
          const self = (await clusterNodes(replica)).find((line) => line.flags.includes("myself"));
          if (self?.flags.includes("master")) promoted = replica;
        }
        return promoted !== undefined;
      });
      await until("the cluster's recovery", async () =>
        (await Promise.all([...live].map(clusterOk))).every(Boolean),
      );
      await master.start();
      live.add(master);
      await until("the old master's return as a replica", async () => {
        const self = (await clusterNodes(master)).find((line) => line.flags.includes("myself"));
        return Boolean(self?.flags.includes("slave")) && (await linkedToMaster(master));
      });
      return promoted!;
    },
    async masterOf(slot) {
      for (const master of await cluster.masters()) {
        const self = (await clusterNodes(master)).find((line) => line.flags.includes("myself"));
        if (self && ownsSlot(self.slots, slot)) return master;
      }
      throw new Error(`no master owns slot ${slot}`);
    },
    async migrateSlot(slot, to, options = {}) {
      const from = await cluster.masterOf(slot);
      if (from === to) throw new Error(`slot ${slot} is on ${to.port} already`);
      const masters = await cluster.masters();
      if (!masters.includes(to)) throw new Error(`${to.port} is not a master`);
      const idOf = async (node: RedisServer) =>
        String(await expectOk(node.port, ["CLUSTER", "MYID"]));
      const [fromId, toId] = await Promise.all([idOf(from), idOf(to)]);
      const at = String(slot);
      // The target first: a client sent there by ASK must find it importing.
      await expectOk(to.port, ["CLUSTER", "SETSLOT", at, "IMPORTING", fromId]);
      await expectOk(from.port, ["CLUSTER", "SETSLOT", at, "MIGRATING", toId]);
      const batch = String(options.batch ?? 100);
      let keys = 0;
      const moveKeys = async () => {
        for (;;) {
          const names = await expectOk(from.port, ["CLUSTER", "GETKEYSINSLOT", at, batch]);
          if (!Array.isArray(names) || names.length === 0) return;
          const migrate = ["MIGRATE", "127.0.0.1", String(to.port), "", "0", "5000", "KEYS"];
          await expectOk(from.port, [...migrate, ...names.map(String)]);
          keys += names.length;
        }
      };
      await moveKeys();
      await options.onKeysMoved?.();
      // Nothing should have been written to the source meanwhile (a missing key is ASKed to
      // the target); were something there, NODE would refuse while the source holds keys.
      await moveKeys();
      // The target, then the source (which stops answering ASK with its keys gone), then the
      // other masters, so that no node points a client back at the source.
      const others = masters.filter((node) => node !== to && node !== from);
      for (const node of [to, from, ...others])
        await expectOk(node.port, ["CLUSTER", "SETSLOT", at, "NODE", toId]);
      await until(`slot ${slot}'s move to ${to.port}`, async () => {
        const views = await Promise.all([...live].map(clusterNodes));
        return views.every((lines) => {
          const owner = lines.find((line) => line.id === toId);
          return owner !== undefined && ownsSlot(owner.slots, slot);
        });
      });
      return { from, keys };
    },
    close: closeAll,
  };
  return cluster;
}

/** Joins fresh member nodes: MEET, slots shared among the first `masterCount`, replicas assigned. */
async function join(nodes: RedisServer[], masterCount: number): Promise<void> {
  const [first, ...others] = nodes;
  if (!first) throw new Error("no nodes");
  for (const node of others) {
    const reply = await redisCommand(
      first.port,
      `CLUSTER MEET 127.0.0.1 ${node.port} ${node.busPort}`,
    );
    if (reply !== "+OK") throw new Error(`CLUSTER MEET: ${reply}`);
  }
  const masters = nodes.slice(0, masterCount);
  for (const [index, master] of masters.entries()) {
    const start = Math.floor((index * SLOTS) / masterCount);
    const end = Math.floor(((index + 1) * SLOTS) / masterCount) - 1;
    const reply = await redisCommand(master.port, `CLUSTER ADDSLOTSRANGE ${start} ${end}`);
    if (reply !== "+OK") throw new Error(`CLUSTER ADDSLOTSRANGE: ${reply}`);
  }
  await until("every node meeting every other", async () => {
    const views = await Promise.all(nodes.map(clusterNodes));
    return views.every((lines) => lines.length === nodes.length);
  });
  const ids = await Promise.all(masters.map((node) => redisCommand(node.port, "CLUSTER MYID")));
  for (const [index, replica] of nodes.slice(masterCount).entries()) {
    const master = ids[index % masterCount];
    const reply = await redisCommand(replica.port, `CLUSTER REPLICATE ${master}`);
    if (reply !== "+OK") throw new Error(`CLUSTER REPLICATE: ${reply}`);
  }
  await until("the cluster's state ok on every node", async () =>
    (await Promise.all(nodes.map(clusterOk))).every(Boolean),
  );
  await until("every replica's sync", async () =>
    (await Promise.all(nodes.slice(masterCount).map(linkedToMaster))).every(Boolean),
  );
}
