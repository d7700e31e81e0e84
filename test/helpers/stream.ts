import { createParser } from "eventsource-parser";

/** Reads SSE messages from a live response body as they arrive. */
export class SseReader {
  readonly #queue: Record<string, unknown>[] = [];
  readonly #waiters: (() => void)[] = [];
  #ended = false;
  readonly done: Promise<void>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly comments: string[] = [];
  /** The id of the last event received, for `Last-Event-ID`. */
  lastEventId: string | undefined;
  /** The id of every message received, in order (undefined for events without one). */
  readonly eventIds: (string | undefined)[] = [];

  constructor(body: ReadableStream<Uint8Array>) {
    const parser = createParser({
      onEvent: (event) => {
        if (event.id) this.lastEventId = event.id;
        if (event.data) {
          this.eventIds.push(event.id);
          this.#push(JSON.parse(event.data));
        }
      },
      onComment: (comment) => this.comments.push(comment),
    });
    const decoder = new TextDecoder();
    const reader = body.getReader();
    this.#reader = reader;
    this.done = (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch {
        // aborted by the test
      } finally {
        this.#ended = true;
        for (const wake of this.#waiters.splice(0)) wake();
      }
    })();
  }

  /** The next message, or undefined if the stream ends first or `ms` pass. */
  async next(ms = 2_000): Promise<Record<string, unknown> | undefined> {
    const deadline = Date.now() + ms;
    while (this.#queue.length === 0 && !this.#ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, Math.max(0, deadline - Date.now()));
      });
    }
    return this.#queue.shift();
  }

  /** Cuts the connection from the client side. */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
    await this.done;
  }

  /** Messages already received and not yet taken. */
  get pending(): number {
    return this.#queue.length;
  }

  get ended(): boolean {
    return this.#ended;
  }

  #push(message: Record<string, unknown>): void {
    this.#queue.push(message);
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
