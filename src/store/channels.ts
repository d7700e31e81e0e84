import type { EventBus } from "./types.js";

/**
 * A bus channel with the type of its messages: declared once, by the layer that owns it, so
 * nobody publishes a message of the wrong shape or casts what arrives.
 */
export interface Channel<Message> {
  readonly name: string;
  /** Never set: carries the message type only. */
  readonly message?: Message;
}

/** Declares a channel named `name` carrying `Message`s. */
export function channel<Message>(name: string): Channel<Message> {
  return { name };
}

/** Publishes on a typed channel; resolves to how many stores received the message. */
export function publish<Message>(
  bus: EventBus,
  on: Channel<Message>,
  message: Message,
): Promise<number> {
  return bus.publish(on.name, message);
}

/** Subscribes to a typed channel; resolves, once live, to the function that ends it. */
export function subscribe<Message>(
  bus: EventBus,
  on: Channel<Message>,
  listener: (message: Message) => void,
): Promise<() => Promise<void>> {
  return bus.subscribe(on.name, listener as (message: unknown) => void);
}
