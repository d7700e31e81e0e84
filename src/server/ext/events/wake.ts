import { type Channel, channel, subscribe } from "../../../store/channels.js";
import type { EventBus } from "../../../store/types.js";

/** A wake-up for the readers of one event type's feed: something was appended at `s`. */
export interface FeedWake {
  s: string;
}

/** The bus channel that wakes the readers of event type `name`'s feed on every process. */
export function wakeChannel(name: string): Channel<FeedWake> {
  return channel<FeedWake>(`events:${name}`);
}

interface Topic {
  readers: Set<() => void>;
  /** Resolves once the bus subscription is live, to the function that ends it. */
  live: Promise<() => Promise<void>>;
}

/**
 * This process's bus subscriptions for push streams: one per event type with a stream open,
 * whose wake-ups go to every stream of that type. A wake-up carries nothing a reader relies
 * on: each reads the feed from its own position.
 */
export class Waker {
  readonly #bus: EventBus;
  readonly #onError: (error: unknown) => void;
  readonly #topics = new Map<string, Topic>();

  constructor(bus: EventBus, onError: (error: unknown) => void) {
    this.#bus = bus;
    this.#onError = onError;
  }

  /**
   * Calls `reader` on every wake-up of event type `name`; resolves once wake-ups are heard, to
   * the function that stops them.
   */
  async add(name: string, reader: () => void): Promise<() => void> {
    let topic = this.#topics.get(name);
    if (!topic) {
      const readers = new Set<() => void>();
      const live = subscribe(this.#bus, wakeChannel(name), () => {
        for (const wake of readers) wake();
      });
      topic = { readers, live };
      this.#topics.set(name, topic);
    }
    topic.readers.add(reader);
    const current = topic;
    const remove = () => {
      if (!current.readers.delete(reader) || current.readers.size > 0) return;
      if (this.#topics.get(name) === current) this.#topics.delete(name);
      current.live.then((stop) => stop()).catch(this.#onError);
    };
    try {
      await current.live;
    } catch (error) {
      remove();
      throw error;
    }
    return remove;
  }

  /** Ends every bus subscription. */
  async close(): Promise<void> {
    const topics = [...this.#topics.values()];
    this.#topics.clear();
    await Promise.all(
      topics.map((topic) => topic.live.then((stop) => stop()).catch(() => undefined)),
    );
  }
}
