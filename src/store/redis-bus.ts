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
export function redisBus(options: RedisBusOptions): EventBus & { close(): Promise<void> } {
  const { publisher, prefix } = options;
  const channels = new Map<string, Channel>();
  /** Channels whose UNSUBSCRIBE failed (Redis was down): ioredis resubscribes them on reconnect. */
  const orphans = new Set<string>();
  let subscriber: RedisClient | undefined;
  let epoch = 0;
  let closed = false;

  const unsubscribe = async (name: string) => {
    try {
      await subscriber?.unsubscribe(name);
      orphans.delete(name);
    } catch {
      orphans.add(name);
    }
  };

  const deliver = (name: string, raw: string) => {
    const channel = channels.get(name);
    if (!channel) {
      if (orphans.delete(name)) void unsubscribe(name);
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

  const connection = (): RedisClient => {
    if (!subscriber) {
      subscriber = options.subscriber();
      subscriber.on("message", deliver);
      // Every (re)connection starts a new epoch: messages published meanwhile were lost.
      subscriber.on("ready", () => epoch++);
    }
    return subscriber;
  };

  const open = (name: string): Channel => {
    const sub = connection();
    const channel: Channel = {
      listeners: new Set(),
      subscribed: whenWritable(sub).then(async () => {
        await sub.subscribe(name);
      }),
    };
    // A refused SUBSCRIBE leaves nothing behind: the next subscribe() tries again.
    channel.subscribed.catch(() => {
      if (channels.get(name) === channel) channels.delete(name);
    });
    channels.set(name, channel);
    orphans.delete(name);
    return channel;
  };

  return {
    epoch: () => (publisher.status === "ready" && subscriber?.status === "ready" ? epoch : -1),

    async publish(channel, message) {
      return publisher.publish(prefix + channel, JSON.stringify(message) ?? "null");
    },

    async subscribe(channelName, listener) {
      if (closed) throw new Error("the store is closed");
      const name = prefix + channelName;
      const channel = channels.get(name) ?? open(name);
      channel.listeners.add(listener);
      try {
        await channel.subscribed;
      } catch (error) {
        channel.listeners.delete(listener);
        throw error;
      }
      return async () => {
        if (!channel.listeners.delete(listener) || channel.listeners.size > 0) return;
        if (channels.get(name) !== channel) return;
        channels.delete(name);
        // The listener is gone either way: an UNSUBSCRIBE that fails now is retried when the
        // channel's next message arrives.
        await unsubscribe(name);
      };
    },

    async close() {
      closed = true;
      const names = [...channels.keys()];
      channels.clear();
      const sub = subscriber;
      if (!sub) return;
      sub.off("message", deliver);
      if (names.length > 0) await sub.unsubscribe(...names).catch(() => undefined);
    },
  };
}
