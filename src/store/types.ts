/** Claims single-use values across every process that shares the store. */
export interface NonceStore {
  /** True the first time `key` is claimed within `ttlMs`; false on every later claim. */
  claim(key: string, ttlMs: number): Promise<boolean>;
}

/** A message on the bus: a JSON-serialisable value. */
export type BusMessage = unknown;

/** Fans messages out to every subscriber of a channel, in every process sharing the store. */
export interface EventBus {
  publish(channel: string, message: BusMessage): Promise<void>;
  /** Subscribes; resolves once the subscription is live, to the function that ends it. */
  subscribe(channel: string, listener: (message: BusMessage) => void): Promise<() => Promise<void>>;
}

/** The shared state behind a handler. Memory by default; Redis to span processes. */
export interface McpStore {
  readonly nonces: NonceStore;
  readonly bus: EventBus;
  /** Releases connections and timers. */
  close(): Promise<void>;
}
