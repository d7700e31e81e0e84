import type { RedisClient } from "./redis-scripts.js";
import type { BusMessage, EventBus } from "./types.js";

type Listener = (message: BusMessage) => void;

/** How a channel is subscribed: SSUBSCRIBE (sharded pub/sub, Redis 7) or SUBSCRIBE. */
type Mode = "sharded" | "plain";

interface Channel {
  listeners: Set<Listener>;
  mode: Mode;
  /** Settles when Redis has confirmed (or refused) the subscription. */
  subscribed: Promise<void>;
}

/** Options of {@link redisBus}. */
export interface RedisBusOptions {
  publisher: RedisClient;
  /**
   * The pub/sub connection, opened on first use. A Cluster's must have `shardedSubscribers`, so
   * that each SSUBSCRIBE goes to the master of its channel's slot.
   */
  subscriber: () => RedisClient;
  /** The Redis channel of a bus channel (of a shard). */
  channelOf: (name: string, shard: string | undefined) => string;
}

/**
 * Whether Redis refused a sharded pub/sub command itself (before Redis 7 it has none; an ACL
 * may deny it), as opposed to failing to carry it (a connection error).
 */
function isRefusal(error: unknown): boolean {
  return error instanceof Error && /unknown command|NOPERM/i.test(error.message);
}

/**
 * Resolves once `connection` can take a command. ioredis queues commands while it connects
 * unless `enableOfflineQueue` is false; then a SUBSCRIBE sent on a connection still opening
 * would fail, so wait for it to be ready, or for the error that says why it is not.
 */
function whenWritable(connection: RedisClient): Promise<void> {
  if (connection.status === "ready" || connection.options.enableOfflineQueue !== false)
    return Promise.resolve();
  if (connection.status === "wait") return connection.connect();
  if (connection.status === "end") return Promise.reject(new Error("Connection is closed."));
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      connection.off("ready", onReady);
      connection.off("error", onError);
      connection.off("end", onEnd);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => settle();
    const onError = (error: Error) => settle(error);
    const onEnd = () => settle(new Error("Connection is closed."));
    connection.once("ready", onReady);
    connection.once("error", onError);
    connection.once("end", onEnd);
  });
}

/**
 * Redis pub/sub behind the bus: one subscription per channel however many local listeners share
 * it, messages as JSON. A sharded channel goes by SPUBLISH/SSUBSCRIBE, to and from the master of
 * its slot only; once Redis refuses those (before Redis 7), this bus uses PUBLISH/SUBSCRIBE for
 * every channel, as every process on that Redis will. ioredis resubscribes by itself after a
 * reconnect (and, on a Cluster, after a failover moved a slot).
 */
export function redisBus(
  options: RedisBusOptions,
): EventBus & { epoch(): number; close(): Promise<void> } {
  return new RedisBus(options);
}

/**
 * A channel of each mode that a standalone connection stays subscribed to while it lives.
 * Redis counts plain and sharded subscriptions apart, and ioredis leaves subscriber mode once an
 * unsubscribe's reply counts 0 for its own kind, even with channels of the other kind left: the
 * connection then drops their messages. An anchor of each kind in use keeps both counts above 0.
 */
const ANCHOR = "bus-anchor";

class RedisBus implements EventBus {
  readonly #options: RedisBusOptions;
  readonly #channels = new Map<string, Channel>();
  /** The anchor subscriptions made on a standalone connection, by mode (see {@link ANCHOR}). */
  readonly #anchors = new Map<Mode, Promise<void>>();
  /** Channels whose unsubscribe failed (Redis was down): ioredis resubscribes them on reconnect. */
  readonly #orphans = new Map<string, Mode>();
  #subscriber: RedisClient | undefined;
  #epoch = 0;
  #closed = false;
  /** False once Redis refused a sharded pub/sub command. */
  #sharded = true;

  constructor(options: RedisBusOptions) {
    this.#options = options;
  }

  epoch(): number {
    const ready = this.#options.publisher.status === "ready";
    return ready && this.#subscriber?.status === "ready" ? this.#epoch : -1;
  }

  async publish(channel: string, message: BusMessage, shard?: string): Promise<number> {
    const { publisher, channelOf } = this.#options;
    const name = channelOf(channel, shard);
    const json = JSON.stringify(message) ?? "null";
    if (shard !== undefined && this.#sharded) {
      try {
        return (await publisher.spublish(name, json)) as number;
      } catch (error) {
        if (!isRefusal(error)) throw error;
        this.#sharded = false;
      }
    }
    return publisher.publish(name, json);
  }

  async subscribe(
    channelName: string,
    listener: (message: BusMessage) => void,
    shard?: string,
  ): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error("the store is closed");
    const name = this.#options.channelOf(channelName, shard);
    const channel = this.#channels.get(name) ?? this.#open(name, shard !== undefined);
    channel.listeners.add(listener);
    try {
      await channel.subscribed;
    } catch (error) {
      channel.listeners.delete(listener);
      throw error;
    }
    return async () => {
      if (!channel.listeners.delete(listener) || channel.listeners.size > 0) return;
      if (this.#channels.get(name) !== channel) return;
      this.#channels.delete(name);
      // The listener is gone either way: an unsubscribe that fails now is retried when the
      // channel's next message arrives.
      await this.#unsubscribe(name, channel.mode);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const channels = [...this.#channels];
    this.#channels.clear();
    const sub = this.#subscriber;
    if (!sub) return;
    sub.off("message", this.#deliver);
    sub.off("smessage", this.#deliver);
    const named = (mode: Mode) => [
      ...channels.filter(([, channel]) => channel.mode === mode).map(([name]) => name),
      ...(this.#anchors.has(mode) ? [this.#anchorName(mode)] : []),
    ];
    const [plain, sharded] = [named("plain"), named("sharded")];
    this.#anchors.clear();
    // One SUNSUBSCRIBE per channel: on a Cluster, the channels of one command share a slot.
    await Promise.all([
      plain.length > 0 ? sub.unsubscribe(...plain) : undefined,
      ...sharded.map((name) => sub.sunsubscribe(name)),
    ]).catch(() => undefined);
  }

  async #unsubscribe(name: string, mode: Mode): Promise<void> {
    try {
      if (mode === "sharded") await this.#subscriber?.sunsubscribe(name);
      else await this.#subscriber?.unsubscribe(name);
      this.#orphans.delete(name);
    } catch {
      this.#orphans.set(name, mode);
    }
  }

  readonly #deliver = (name: string, raw: string): void => {
    const channel = this.#channels.get(name);
    if (!channel) {
      const mode = this.#orphans.get(name);
      if (mode) {
        this.#orphans.delete(name);
        void this.#unsubscribe(name, mode);
      }
      return;
    }
    let message: BusMessage;
    try {
      message = JSON.parse(raw);
    } catch {
      return; // not ours: something else published on the prefixed channel
    }
    for (const listener of [...channel.listeners]) {
      try {
        listener(message);
      } catch {
        // one failing subscriber must not starve the others
      }
    }
  };

  #connection(): RedisClient {
    if (!this.#subscriber) {
      const subscriber = this.#options.subscriber();
      subscriber.on("message", this.#deliver);
      subscriber.on("smessage", this.#deliver);
      // Every (re)connection starts a new epoch: messages published meanwhile were lost. A
      // Cluster's sharded subscribers come and go on their own (a failover): so do epochs.
      const next = () => this.#epoch++;
      subscriber.on("ready", next);
      if (subscriber.isCluster) subscriber.on("-subscriber", next).on("subscribersReady", next);
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  #anchorName(mode: Mode): string {
    return this.#options.channelOf(ANCHOR, mode === "sharded" ? ANCHOR : undefined);
  }

  /** Subscribes a standalone connection to the anchor of `mode`, once (see {@link ANCHOR}). */
  #anchor(sub: RedisClient, mode: Mode): Promise<void> {
    // A Cluster keeps plain and sharded subscriptions on different connections already.
    if (sub.isCluster) return Promise.resolve();
    let anchored = this.#anchors.get(mode);
    if (!anchored) {
      const name = this.#anchorName(mode);
      anchored = (mode === "sharded" ? sub.ssubscribe(name) : sub.subscribe(name)).then(
        () => undefined,
      );
      // Refused or failed: the next subscription of this mode tries again.
      anchored.catch(() => this.#anchors.delete(mode));
      this.#anchors.set(mode, anchored);
    }
    return anchored;
  }

  #open(name: string, sharded: boolean): Channel {
    const sub = this.#connection();
    const channel: Channel = {
      listeners: new Set(),
      mode: sharded && this.#sharded ? "sharded" : "plain",
      subscribed: Promise.resolve(),
    };
    channel.subscribed = whenWritable(sub).then(async () => {
      if (channel.mode === "sharded") {
        try {
          await this.#anchor(sub, "sharded");
          await sub.ssubscribe(name);
          return;
        } catch (error) {
          if (!isRefusal(error)) throw error;
          this.#sharded = false;
          channel.mode = "plain";
        }
      }
      await this.#anchor(sub, "plain");
      await sub.subscribe(name);
    });
    // A refused subscription leaves nothing behind: the next subscribe() tries again.
    channel.subscribed.catch(() => {
      if (this.#channels.get(name) === channel) this.#channels.delete(name);
    });
    this.#channels.set(name, channel);
    this.#orphans.delete(name);
    return channel;
  }
}
