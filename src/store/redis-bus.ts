import type { RedisClient } from "./redis-scripts.js";
import type { BusMessage, EventBus } from "./types.js";

type Listener = (message: BusMessage) => void;

interface Channel {
  listeners: Set<Listener>;
  /** Settles when Redis has confirmed (or refused) the SUBSCRIBE. */
  subscribed: Promise<void>;
}

/** Options of {@link redisBus}. */
export interface RedisBusOptions {
  publisher: RedisClient;
  /** The pub/sub connection, opened on first use. */
  subscriber: () => RedisClient;
  /** Prepended to every channel name. */
  prefix: string;
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
 * Redis pub/sub behind the bus: one SUBSCRIBE per channel however many local listeners share
 * it, messages as JSON. ioredis resubscribes by itself after a reconnect.
 */
export function redisBus(
  options: RedisBusOptions,
): EventBus & { epoch(): number; close(): Promise<void> } {
  return new RedisBus(options);
}

class RedisBus implements EventBus {
  readonly #options: RedisBusOptions;
  readonly #channels = new Map<string, Channel>();
  /** Channels whose UNSUBSCRIBE failed (Redis was down): ioredis resubscribes them on reconnect. */
  readonly #orphans = new Set<string>();
  #subscriber: RedisClient | undefined;
  #epoch = 0;
  #closed = false;

  constructor(options: RedisBusOptions) {
    this.#options = options;
  }

  epoch(): number {
    const ready = this.#options.publisher.status === "ready";
    return ready && this.#subscriber?.status === "ready" ? this.#epoch : -1;
  }

  async publish(channel: string, message: BusMessage): Promise<number> {
    const { publisher, prefix } = this.#options;
    return publisher.publish(prefix + channel, JSON.stringify(message) ?? "null");
  }

  async subscribe(
    channelName: string,
    listener: (message: BusMessage) => void,
  ): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error("the store is closed");
    const name = this.#options.prefix + channelName;
    const channel = this.#channels.get(name) ?? this.#open(name);
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
      // The listener is gone either way: an UNSUBSCRIBE that fails now is retried when the
      // channel's next message arrives.
      await this.#unsubscribe(name);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const names = [...this.#channels.keys()];
    this.#channels.clear();
    const sub = this.#subscriber;
    if (!sub) return;
    sub.off("message", this.#deliver);
    if (names.length > 0) await sub.unsubscribe(...names).catch(() => undefined);
  }

  async #unsubscribe(name: string): Promise<void> {
    try {
      await this.#subscriber?.unsubscribe(name);
      this.#orphans.delete(name);
    } catch {
      this.#orphans.add(name);
    }
  }

  readonly #deliver = (name: string, raw: string): void => {
    const channel = this.#channels.get(name);
    if (!channel) {
      if (this.#orphans.delete(name)) void this.#unsubscribe(name);
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
      // Every (re)connection starts a new epoch: messages published meanwhile were lost.
      subscriber.on("ready", () => this.#epoch++);
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  #open(name: string): Channel {
    const sub = this.#connection();
    const channel: Channel = {
      listeners: new Set(),
      subscribed: whenWritable(sub).then(async () => {
        await sub.subscribe(name);
      }),
    };
    // A refused SUBSCRIBE leaves nothing behind: the next subscribe() tries again.
    channel.subscribed.catch(() => {
      if (this.#channels.get(name) === channel) this.#channels.delete(name);
    });
    this.#channels.set(name, channel);
    this.#orphans.delete(name);
    return channel;
  }
}
