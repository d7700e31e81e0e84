import type { EventOccurrence } from "../../../protocol/events.js";
import { Backoff } from "../../backoff.js";
import { AsyncQueue } from "../../queue.js";
import type { EventStreamOptions, EventSubscription } from "./types.js";

/** Event ids remembered to drop a repeat (a replay after reconnecting, a duplicate poll). */
const REMEMBERED_IDS = 10_000;

/** What the loop queues: an occurrence and the cursor after it, or a cursor alone. */
type Item = { event: EventOccurrence; cursor?: string | null } | { cursor: string | null };

/**
 * The iterator a poll or push subscription returns: occurrences each `eventId` once, in order,
 * and the cursor, which moves past an occurrence only once the app asks for the next one (it
 * is done with it), so a persisted cursor never skips an event the app did not take.
 */
export class OccurrenceStream implements EventSubscription {
  readonly delivery: "poll" | "push";
  readonly active: Promise<void>;
  readonly #queue: AsyncQueue<Item>;
  readonly #onCursor: ((cursor: string | null) => void) | undefined;
  readonly #seen = new Set<string>();
  #cursor: string | null;
  /** The cursor after the occurrence the app holds: applied when it asks for the next. */
  #held: { cursor: string | null } | undefined;
  /** Whether the app holds an occurrence (it has not asked for the next one yet). */
  #holding = false;
  /** Occurrences queued, on their way to the app or held by it: not done with yet. */
  #unreleased = 0;
  #closed = false;
  #activate: () => void = () => {};
  #refuse: (error: unknown) => void = () => {};

  constructor(
    delivery: "poll" | "push",
    cursor: string | null,
    onCursor: ((cursor: string | null) => void) | undefined,
    cleanup: () => void,
  ) {
    this.delivery = delivery;
    this.#cursor = cursor;
    this.#onCursor = onCursor;
    // Nothing is dropped: a lost occurrence would be skipped by the cursor after it.
    this.#queue = new AsyncQueue<Item>(cleanup, Number.POSITIVE_INFINITY);
    this.active = new Promise<void>((resolve, reject) => {
      this.#activate = resolve;
      this.#refuse = reject;
    });
    this.active.catch(() => {});
  }

  /** The cursor of everything the app has taken: persist it, pass it back to resume. */
  get cursor(): string | null {
    return this.#cursor;
  }

  /** Occurrences and positions queued and not taken yet (a poll loop waits while many). */
  get backlog(): number {
    return this.#queue.size;
  }

  /** The subscription is live. */
  activate(): void {
    this.#activate();
  }

  /** Queues an occurrence unless its id came before, and the cursor after it (if it moves). */
  deliver(event: EventOccurrence, cursor?: string | null): void {
    if (this.#seen.has(event.eventId)) {
      if (cursor !== undefined) this.mark(cursor);
      return;
    }
    this.#seen.add(event.eventId);
    if (this.#seen.size > REMEMBERED_IDS) this.#seen.delete(this.#seen.values().next().value!);
    this.#unreleased++;
    this.#queue.push(cursor === undefined ? { event } : { event, cursor });
  }

  /**
   * A position reached without an event (an empty poll, a heartbeat, `active`): taken at once
   * when nothing is queued or held by the app, else queued behind what is.
   */
  mark(cursor: string | null | undefined): void {
    if (this.#unreleased === 0 && this.#queue.size === 0) this.#advance(cursor ?? null);
    else this.#queue.push({ cursor: cursor ?? null });
  }

  /** Ends the iteration, with an error when the loop failed; `active` rejects if never live. */
  finish(error?: unknown): void {
    this.#refuse(error ?? new Error("The subscription ended before it was active"));
    this.#queue.end(error);
  }

  async next(): Promise<IteratorResult<EventOccurrence>> {
    if (this.#closed) return { value: undefined, done: true };
    this.#release();
    if (this.#holding) this.#unreleased--;
    this.#holding = false;
    for (;;) {
      const result = await this.#queue.next();
      if (result.done) return result;
      const item = result.value;
      if (!("event" in item)) {
        this.#advance(item.cursor);
        continue;
      }
      if (item.cursor !== undefined) this.#held = { cursor: item.cursor };
      this.#holding = true;
      return { value: item.event, done: false };
    }
  }

  /** Stops: the occurrence the app holds is not counted as taken (it may have failed on it). */
  close(): void {
    this.#closed = true;
    this.#queue.close();
  }

  return(): Promise<IteratorResult<EventOccurrence>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The app is done with the occurrence it held: its cursor is reached. */
  #release(): void {
    if (this.#held) this.#advance(this.#held.cursor);
    this.#held = undefined;
  }

  #advance(cursor: string | null): void {
    if (cursor === this.#cursor) return;
    this.#cursor = cursor;
    this.#onCursor?.(cursor);
  }
}

/**
 * What a poll or push subscription starts from: its stream (closed by the caller's signal too),
 * the controller whose abort stops its loop when the app closes it, and its reconnection backoff.
 */
export function startSubscription(
  mode: "poll" | "push",
  options: EventStreamOptions,
): { stream: OccurrenceStream; controller: AbortController; backoff: Backoff | undefined } {
  const controller = new AbortController();
  const stream = new OccurrenceStream(mode, options.cursor ?? null, options.onCursor, () =>
    controller.abort(new Error("The subscription was closed")),
  );
  options.signal?.addEventListener("abort", () => stream.close(), { once: true });
  const backoff = options.reconnect === false ? undefined : new Backoff(options.reconnect);
  return { stream, controller, backoff };
}
