import type { JsonObject, JsonRpcMessage, RequestId } from "../../protocol/messages.js";
import type { EventLog, LoggedEvent } from "../../store/types.js";
import { fromBase64, fromUtf8, toBase64Url, utf8 } from "../../utils/base64.js";
import type { SseStream } from "../sse.js";

/** Separates a stream id from the event counter inside an SSE event id. */
const SEPARATOR = ".";
/** The counter of the marker event that records the end of a stream in its log. */
const END = "end";

/** The stream an SSE event id belongs to. */
export function streamOfEventId(eventId: string): string | undefined {
  const at = eventId.lastIndexOf(SEPARATOR);
  return at > 0 ? eventId.slice(0, at) : undefined;
}

/** True for `{}`: the message of a priming event, which is never replayed. */
function isEmpty(message: JsonObject): boolean {
  for (const _ in message) return false;
  return true;
}

function seqOf(eventId: string): number {
  return Number(eventId.slice(eventId.lastIndexOf(SEPARATOR) + 1));
}

/** Longest request id carried in a stream id (longer ones are not carried). */
const MAX_CARRIED_ID = 96;

/**
 * A new POST stream's id: random, then the request's id, so a process resuming the stream
 * elsewhere can answer that request if the process running it is gone.
 */
export function postStreamId(random: string, requestId: RequestId): string {
  const carried = toBase64Url(utf8(JSON.stringify(requestId)));
  return carried.length <= MAX_CARRIED_ID ? `${random}r${carried}` : random;
}

/** The request id a POST stream's id carries, if any. */
export function requestIdOfStream(streamId: string): RequestId | undefined {
  const at = streamId.indexOf("r");
  if (at < 0) return undefined;
  try {
    const id: unknown = JSON.parse(fromUtf8(fromBase64(streamId.slice(at + 1))));
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a stream tells other processes while no connection of its own is attached: its events,
 * its end, and that the process running it is still there (an answer to a check).
 */
export type StreamEvent = LoggedEvent | { end: true } | { alive: true };

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
  /** Highest counter written to the current connection, so replays never repeat an event. */
  #written = 0;
  #holding: StreamEvent[] | undefined;
  #queued: JsonRpcMessage[] | undefined;
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
    for (const message of queued ?? []) this.send(message);
  }

  /**
   * Logs `message` and writes it to the connection, if one is attached; `json` is its JSON
   * text when the caller has it already (one change sent to many streams is serialised once).
   */
  send(message: JsonRpcMessage, json?: string): void {
    if (this.#queued) {
      this.#queued.push(message);
      return;
    }
    const seq = ++this.#seq;
    const event = { id: `${this.id}${SEPARATOR}${seq}`, message: message as unknown as JsonObject };
    this.#append(event);
    // Always forwarded: the connection may be gone before this process notices, and a
    // resumption elsewhere drops what it already replayed.
    this.#options.forward?.(event);
    if (this.#holding) this.#holding.push(event);
    else this.#write(event, seq, json);
  }

  /** Writes an event with an id and no data, so the client has a `Last-Event-ID` at once. */
  prime(writer: SseStream): void {
    const id = `${this.id}${SEPARATOR}${++this.#seq}`;
    this.#append({ id, message: {} });
    writer.writeRaw(`id: ${id}\ndata: \n\n`);
    this.#written = this.#seq;
  }

  /** Writes an event that this stream, or its owner on another process, produced. */
  relay(event: StreamEvent): void {
    if (this.#holding) {
      this.#holding.push(event);
      return;
    }
    if ("alive" in event) return;
    if ("end" in event) {
      this.end();
      return;
    }
    this.#write(event, seqOf(event.id));
  }

  #write(event: LoggedEvent, seq: number, json?: string): void {
    if (!this.#writer || seq <= this.#written || isEmpty(event.message)) return;
    this.#written = seq;
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
      replay = await this.#options.log.after(this.logKey, lastEventId);
    } catch (error) {
      this.#holding = undefined;
      this.release();
      throw error;
    }
    this.#holding = undefined;
    this.attach(writer);
    this.#written = Number.isFinite(seqOf(lastEventId)) ? seqOf(lastEventId) : 0;
    this.#seq = Math.max(this.#seq, this.#written);
    for (const event of [...(replay ?? []), ...held]) {
      if ("id" in event && event.id.endsWith(`${SEPARATOR}${END}`)) this.end();
      else {
        if ("id" in event) this.#seq = Math.max(this.#seq, seqOf(event.id));
        this.relay(event);
      }
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
    this.#options.forward?.({ end: true });
    this.#writer?.close();
  }

  /** Ends a stream this process produced, recording the end for resumptions elsewhere. */
  endAndLog(): void {
    const marker = { id: `${this.id}${SEPARATOR}${END}`, message: {} };
    this.#append(marker);
    this.end();
  }
}
