import type { ClientCache } from "./client-cache.js";
import type { Subscription } from "./listen.js";
import type { McpClientOptions } from "./options.js";
import type { LogMessage, Notification } from "./types.js";

/**
 * Where a notification that reached the client goes: `onLog`, the cache it makes stale, the
 * open `listen()` iterators, then `onNotification`; the iterators end with the client.
 */
export class NotificationRouter {
  readonly #options: McpClientOptions;
  readonly #cache: ClientCache;
  readonly #listeners = new Set<(notification: Notification) => void>();
  /** Open `listen()` iterators, ended with the client. */
  readonly #subscriptions = new Set<Subscription>();

  constructor(options: McpClientOptions, cache: ClientCache) {
    this.#options = options;
    this.#cache = cache;
  }

  /** Hands one notification on to everyone who wants it. */
  deliver(notification: Notification): void {
    if (notification.method === "notifications/message") {
      this.#options.onLog?.(notification.params as unknown as LogMessage);
    }
    this.#cache.invalidate(notification);
    for (const listener of this.#listeners) listener(notification);
    this.#options.onNotification?.(notification);
  }

  /** Adds a listener; the function returned removes it. */
  subscribe(listener: (notification: Notification) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Keeps an open `listen()` iterator until it closes, to end it with the client. */
  track(subscription: Subscription): Subscription {
    this.#subscriptions.add(subscription);
    const close = subscription.close.bind(subscription);
    subscription.close = () => {
      this.#subscriptions.delete(subscription);
      close();
    };
    return subscription;
  }

  /** Ends every open iterator and removes every listener: the client closed. */
  close(): void {
    for (const subscription of this.#subscriptions) subscription.close();
    this.#subscriptions.clear();
    this.#listeners.clear();
  }
}
