import type { JsonObject, JsonRpcMessage } from "../../protocol/messages.js";
import type { EventLog, LoggedEvent } from "../../store/types.js";
import type { SseStream } from "../streams/sse.js";
import { RelayOrder } from "./relay-order.js";
import { endMarkerId, eventId, isEndMarker, seqOf } from "./stream-ids.js";

/** True for `{}`: the message of a priming event, which is never replayed. */
function isEmpty(message: JsonObject): boolean {
  for (const _ in message) return false;
  return true;
}

/**
 * How many changes another process delivered on a stream that a resumption here remembers:
 * this process may hear one of them late, after it took the stream over, and skips it.
 */
const REMEMBERED_CHANGES = 64;

/**
 * What a stream tells other processes, for a resumption there: its events, and its end after
 * its last event's counter.
 */
export type StreamEvent = LoggedEvent | { end: true; seq?: number };

/** Options of {@link LegacyStream}. */
export interface LegacyStreamOptions {
  sessionId: string;
  id: string;
  log: EventLog;
  onError: (error: unknown) => void;
  /** Called with each event and the end, so a resumption on another process can go on live. */
  forward?: (event: StreamEvent) => void;
}

/**
 * One logical SSE stream of a legacy session (a POST response or the GET stream). Every event
 * gets an id unique within the session and goes to the replay log, so a client whose
 * connection broke can resume with `Last-Event-ID` on a new connection, on any process
 * (PROTOCOL §3).
 */
export class LegacyStream {
  readonly id: string;
  readonly #options: LegacyStreamOptions;
  #seq = 0;
  #writer: SseStream | undefined;
  #ended = false;
  /** Highest counter applied to the current connection, so replays never repeat an event. */
  #written = 0;
  /** Puts events relayed from another process in order (made at the first). */
  #order: RelayOrder | undefined;
  #holding: StreamEvent[] | undefined;
  #queued: { message: JsonRpcMessage; change: string | undefined }[] | undefined;
  /** Changes another process delivered on this stream lately (see {@link REMEMBERED_CHANGES}). */
  #delivered: Set<string> | undefined;
  /** The last append to the log, so a handover can wait until the log holds every event. */
  #appended: Promise<void> = Promise.resolve();

  constructor(options: LegacyStreamOptions) {
    this.id = options.id;
    this.#options = options;
  }

  /** The key of this stream's replay log. */
  get logKey(): string {
    return `${this.#options.sessionId}/${this.id}`;
  }

  get attached(): boolean {
    return this.#writer !== undefined && !this.#writer.closed;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The counter of the last event this stream produced. */
  get seq(): number {
    return this.#seq;
  }

  /** Resolves once every event so far is in the log (appends go in order). */
  flushed(): Promise<void> {
    return this.#appended;
  }

  #append(event: LoggedEvent): void {
    this.#appended = this.#options.log.append(this.logKey, event).catch(this.#options.onError);
  }

  /** Goes on from event `seq` of a stream another process produced (a handoff). */
  continueFrom(seq: number): void {
    this.#seq = Math.max(this.#seq, seq);
  }

  /**
   * Holds back what this stream is asked to send, unnumbered, until {@link release}: while a
   * resumption reads the log or a takeover waits for the old holder, the next counter is not
   * known yet, and a number taken now could repeat one the log already has.
   */
  hold(): void {
    this.#queued ??= [];
  }

  /** Sends what was held back, numbered after everything known now. */
  release(): void {
    const queued = this.#queued;
    this.#queued = undefined;
    for (const { message, change } of queued ?? []) this.send(message, undefined, change);
  }

  /** Notes a change another process delivered on this stream, so this one never repeats it. */
  #remember(event: StreamEvent): void {
    if (!("eid" in event) || event.eid === undefined) return;
    this.#delivered ??= new Set();
    this.#delivered.add(event.eid);
    if (this.#delivered.size > REMEMBERED_CHANGES)
      this.#delivered.delete(this.#delivered.values().next().value!);
  }

  /**
   * Logs `message` and writes it to the connection, if one is attached; `json` is its JSON
   * text when the caller has it already (one change sent to many streams is serialised once).
   * `change` is the id of the change it delivers: one that another process delivered on this
   * stream already (before a takeover) is skipped.
   */
  send(message: JsonRpcMessage, json?: string, change?: string): void {
    if (change !== undefined && this.#delivered?.has(change)) return;
    if (this.#queued) {
      this.#queued.push({ message, change });
      return;
    }
    const seq = ++this.#seq;
    const event: LoggedEvent = {
      id: eventId(this.id, seq),
      message: message as unknown as JsonObject,
    };
    if (change !== undefined) event.eid = change;
    this.#append(event);
    // Always forwarded: the connection may be gone before this process notices, and a
    // resumption elsewhere drops what it already replayed.
    this.#options.forward?.(event);
    if (this.#holding) this.#holding.push(event);
    else this.#write(event, seq, json);
  }

  /** Resolves once the attached connection's reader caught up (see `SseStream.writable`). */
  writable(): Promise<void> {
    return this.#writer?.writable() ?? Promise.resolve();
  }

  /** Writes an event with an id and no data, so the client has a `Last-Event-ID` at once. */
  prime(writer: SseStream): void {
    const event = { id: eventId(this.id, ++this.#seq), message: {} };
    this.#append(event);
    // Forwarded too, so a resumption elsewhere sees no gap in the counters.
    this.#options.forward?.(event);
    writer.writeRaw(`id: ${event.id}\ndata: \n\n`);
    this.#written = this.#seq;
  }

  /** Writes an event that this stream's owner on another process produced, in order. */
  relay(event: StreamEvent): void {
    this.#remember(event);
    if (this.#holding) {
      this.#holding.push(event);
      return;
    }
    if (this.#ended) return;
    const stream = this;
    this.#order ??= new RelayOrder({
      get written() {
        return stream.#written;
      },
      write: (logged, seq) => this.#write(logged, seq),
      end: () => this.end(),
      after: (seq) => this.#options.log.after(this.logKey, eventId(this.id, seq)),
      onError: this.#options.onError,
    });
    if ("end" in event) this.#order.end(event.seq);
    else this.#order.event(event);
  }

  #write(event: LoggedEvent, seq: number, json?: string): void {
    if (seq <= this.#written) return;
    this.#written = seq;
    if (!this.#writer || isEmpty(event.message)) return;
    this.#writer.sendJson(json ?? JSON.stringify(event.message), event.id);
  }

  /**
   * Resumes on a new connection: replays what followed `lastEventId` from the log, then goes on
   * live. Events arriving while the log is read (and while `before` runs) are held back and
   * deduplicated, so none is lost or doubled; a stream whose log records its end closes after the replay. False when the log
   * knows neither the stream nor the event.
   */
  async resume(
    writer: SseStream,
    lastEventId: string,
    before?: () => Promise<void>,
  ): Promise<boolean> {
    const held: StreamEvent[] = [];
    this.#holding = held;
    this.hold();
    let replay: LoggedEvent[] | undefined;
    try {
      // Such as: the process that held the stream lets go, its last events logged.
      await before?.();
      const log = this.#options.log;
      // The changes delivered just before `lastEventId` too: this process may hear one late.
      const seen = Math.max(1, seqOf(lastEventId) - REMEMBERED_CHANGES);
      const earlier = Number.isFinite(seen) ? log.after(this.logKey, eventId(this.id, seen)) : [];
      [replay] = await Promise.all([log.after(this.logKey, lastEventId), earlier]);
      // Only those the client saw: a read made after the replay's may hold newer ones.
      for (const event of (await earlier) ?? [])
        if (seqOf(event.id) <= seqOf(lastEventId)) this.#remember(event);
    } catch (error) {
      this.#holding = undefined;
      this.release();
      throw error;
    }
    this.#holding = undefined;
    this.attach(writer);
    this.#written = Number.isFinite(seqOf(lastEventId)) ? seqOf(lastEventId) : 0;
    this.#seq = Math.max(this.#seq, this.#written);
    // The log is in order and complete: its events go out as they are; the bus's, in order.
    for (const event of replay ?? []) {
      this.#remember(event);
      if (isEndMarker(event.id)) this.end();
      else {
        this.#seq = Math.max(this.#seq, seqOf(event.id));
        this.#write(event, seqOf(event.id));
      }
    }
    for (const event of held) {
      if ("id" in event) this.#seq = Math.max(this.#seq, seqOf(event.id));
      this.relay(event);
    }
    this.release();
    return replay !== undefined;
  }

  /** Attaches a connection, replacing (and closing) any earlier one. */
  attach(writer: SseStream): void {
    const previous = this.#writer;
    // The new connection first, so the old one closing sees the stream still attached.
    this.#writer = writer;
    if (previous && previous !== writer) previous.close();
    writer.onClose(() => {
      if (this.#writer === writer) this.#writer = undefined;
    });
    if (this.#ended) writer.close();
  }

  /** Writes an SSE comment to the current connection. */
  keepAlive(): void {
    this.#writer?.writeRaw(":\n\n");
  }

  /** Closes the current connection, asking the client to come back after `retryMs` (polling). */
  detach(retryMs: number): void {
    this.#writer?.writeRaw(`retry: ${retryMs}\n\n`);
    this.#writer?.close();
    this.#writer = undefined;
  }

  /** Ends the stream: recorded in the log, and the connection closes after what was written. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#order?.close();
    this.#options.forward?.({ end: true, seq: this.#seq });
    this.#writer?.close();
  }

  /** Ends a stream this process produced, recording the end for resumptions elsewhere. */
  endAndLog(): void {
    const marker = { id: endMarkerId(this.id), message: {} };
    this.#append(marker);
    this.end();
  }
}
