import type { McpClient } from "../../client/client.js";
import type { UpstreamLease } from "../types.js";

/** The default time `close()` gives requests in flight. */
export const DEFAULT_CLOSE_GRACE_MS = 5_000;

/**
 * The leases out on one connection: each released once, and a wait for all of them to come
 * back, bounded, for a graceful close.
 */
export class Leases {
  #count = 0;
  readonly #onDrained = new Set<() => void>();
  readonly #onIdle: (() => void) | undefined;

  /** `onIdle` is called each time the last lease out comes back. */
  constructor(onIdle?: () => void) {
    this.#onIdle = onIdle;
  }

  /** Leases not yet released. */
  get count(): number {
    return this.#count;
  }

  /** Lends `client`; its release calls `giveBack` (the concurrency slot), once. */
  lend(client: McpClient, giveBack: () => void = () => {}): UpstreamLease {
    this.#count++;
    let released = false;
    return {
      client,
      release: () => {
        if (released) return;
        released = true;
        this.#count--;
        giveBack();
        if (this.#count > 0) return;
        for (const resolve of this.#onDrained) resolve();
        this.#onIdle?.();
      },
    };
  }

  /** Resolves once no lease is out, or after `graceMs`, whichever comes first. */
  drained(graceMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#onDrained.delete(done);
        resolve();
      };
      const timer = setTimeout(done, graceMs);
      this.#onDrained.add(done);
    });
  }
}
