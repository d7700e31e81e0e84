import type { EventBus } from "./types.js";

/**
 * A bus channel with the type of its messages: declared once, by the layer that owns it, so
 * nobody publishes a message of the wrong shape or casts what arrives.
 */
export interface Channel<Message> {
  readonly name: string;
  /**
   * The scope (a session id) the channel belongs to: on Redis Cluster it then lives on the node
   * owning that session's hash slot only (sharded pub/sub). Unset for fleet-wide broadcasts.
   */
  readonly shard?: string;
  /** Never set: carries the message type only. */
  readonly message?: Message;
}

/**
 * Declares a channel named `name` carrying `Message`s; with `shard`, a per-session channel.
 *
 * @example
 * ```ts
 * const changes = channel<{ uri: string }>("changes");
 * const session = (id: string) => channel<{ t: "end" }>(`session:${id}`, id);
 * ```
 */
export function channel<Message>(name: string, shard?: string): Channel<Message> {
  return shard === undefined ? { name } : { name, shard };
}

/**
 * Publishes on a typed channel. Resolves to the receiver count of the node that ran it, which
 * says nothing about the fleet (see {@link EventBus.publish}).
 */
export function publish<Message>(
  bus: EventBus,
  on: Channel<Message>,
  message: Message,
): Promise<number> {
  // An un-sharded channel keeps the two-argument call that buses (and their doubles) always saw.
  return on.shard === undefined
    ? bus.publish(on.name, message)
    : bus.publish(on.name, message, on.shard);
}

/** Subscribes to a typed channel; resolves, once live, to the function that ends it. */
export function subscribe<Message>(
  bus: EventBus,
  on: Channel<Message>,
  listener: (message: Message) => void,
): Promise<() => Promise<void>> {
  const untyped = listener as (message: unknown) => void;
  return on.shard === undefined
    ? bus.subscribe(on.name, untyped)
    : bus.subscribe(on.name, untyped, on.shard);
}
