import type { LoggedEvent } from "../../store/types.js";
import { isEndMarker, seqOf } from "./stream-ids.js";

/**
 * Longest wait for an event that a later one overtook on the bus before the log, which holds
 * every event in order, is read for it.
 */
export const GAP_WAIT_MS = 1_000;

/** Where {@link RelayOrder} writes a stream's events, and where it finds missing ones. */
export interface OrderedSink {
  /** The counter of the last event applied (written, or passed over as empty). */
  readonly written: number;
  /** Applies event `seq`; `written` is `seq` afterwards. */
  write(event: LoggedEvent, seq: number): void;
  end(): void;
  /** The logged events after counter `seq`, in order; undefined when the log does not know it. */
  after(seq: number): Promise<LoggedEvent[] | undefined>;
  onError(error: unknown): void;
}

/**
 * Applies the events of a stream running on another process in their order. The bus may
 * deliver them out of order (a Redis Cluster, a reconnection): an event that comes early waits
 * for its predecessors; when they have not come within `waitMs`, the log fills the gap, and what
 * it lacks too is passed over, never the events that came early. The stream's end waits for the
 * last event before it, so the end never overtakes a request's result.
 */
export class RelayOrder {
  readonly #sink: OrderedSink;
  readonly #waitMs: number;
  /** Events ahead of the next one expected, by counter. */
  readonly #early = new Map<number, LoggedEvent>();
  /** The counter of the last event before the end, once the end is known. */
  #endAt: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #filling = false;
  #closed = false;

  constructor(sink: OrderedSink, waitMs = GAP_WAIT_MS) {
    this.#sink = sink;
    this.#waitMs = waitMs;
  }

  /** An event of the stream, as the bus delivered it. */
  event(event: LoggedEvent): void {
    const seq = seqOf(event.id);
    if (this.#closed || !Number.isFinite(seq) || seq <= this.#sink.written) return;
    this.#early.set(seq, event);
    this.#settle();
  }

  /** The stream's end, after event `lastSeq` (unknown: after what has been applied). */
  end(lastSeq?: number): void {
    if (this.#closed) return;
    this.#endAt = lastSeq ?? this.#sink.written;
    this.#settle();
  }

  /** Stops waiting (the stream ended or its connection closed). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#early.clear();
  }

  /** Applies what is next in order; ends the stream when its end is reached; else waits. */
  #settle(): void {
    if (this.#filling || this.#closed) return;
    const sink = this.#sink;
    for (let next = sink.written + 1; this.#early.has(next); next = sink.written + 1) {
      const event = this.#early.get(next)!;
      this.#early.delete(next);
      sink.write(event, next);
    }
    for (const seq of this.#early.keys()) if (seq <= sink.written) this.#early.delete(seq);
    if (this.#endAt !== undefined && sink.written >= this.#endAt) {
      this.close();
      sink.end();
      return;
    }
    if (this.#early.size === 0 && this.#endAt === undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      return;
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => void this.#fill(), this.#waitMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Reads the gap from the log; what it lacks is lost for good, so goes on after it. */
  async #fill(): Promise<void> {
    this.#timer = undefined;
    this.#filling = true;
    const sink = this.#sink;
    try {
      for (const event of (await sink.after(sink.written)) ?? []) {
        if (this.#closed) return;
        if (isEndMarker(event.id)) this.#endAt = sink.written;
        else if (seqOf(event.id) > sink.written) sink.write(event, seqOf(event.id));
      }
    } catch (error) {
      sink.onError(error);
    }
    this.#filling = false;
    if (this.#closed) return;
    for (const seq of [...this.#early.keys()].sort((a, b) => a - b)) {
      const event = this.#early.get(seq)!;
      if (seq > sink.written) sink.write(event, seq);
    }
    this.#early.clear();
    // An end announced after events neither the bus nor the log still has: end now.
    if (this.#endAt !== undefined) this.#endAt = Math.min(this.#endAt, sink.written);
    this.#settle();
  }
}
