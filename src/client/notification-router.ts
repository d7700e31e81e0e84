import type { ClientCache } from "./client-cache.js";
import type { McpClientOptions } from "./options.js";
import type { LogMessage, Notification } from "./types.js";

/**
 * Where a notification that reached the client goes: `onLog`, the cache it makes stale, the
 * open `listen()` iterators, then `onNotification`.
 */
export class NotificationRouter {
  readonly #options: McpClientOptions;
  readonly #cache: ClientCache;
  readonly #listeners = new Set<(notification: Notification) => void>();

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

  /** Removes every listener: the client closed. */
  clear(): void {
    this.#listeners.clear();
  }
}
