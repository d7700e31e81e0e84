import type { JsonObject, JsonRpcMessage } from "../protocol/messages.js";
import type { EventLog } from "../store/types.js";
import type { SseStream } from "./sse.js";

/** Separates a stream id from the event counter inside an SSE event id. */
const SEPARATOR = ".";

/** The stream an SSE event id belongs to. */
export function streamOfEventId(eventId: string): string | undefined {
  const at = eventId.lastIndexOf(SEPARATOR);
  return at > 0 ? eventId.slice(0, at) : undefined;
}

/** Options of {@link LegacyStream}. */
export interface LegacyStreamOptions {
  sessionId: string;
  id: string;
  log: EventLog;
  onError: (error: unknown) => void;
}

/**
 * One logical SSE stream of a legacy session (a POST response or the GET stream). Every event
 * gets an id unique within the session and goes to the replay log, so a client whose
 * connection broke can resume with `Last-Event-ID` on a new connection (PROTOCOL §3).
 */
export class LegacyStream {
  readonly id: string;
  readonly #options: LegacyStreamOptions;
  #seq = 0;
  #writer: SseStream | undefined;
  #ended = false;
  #holding: { id: string; message: JsonRpcMessage }[] | undefined;

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

  /** Logs `message` and writes it to the connection, if one is attached. */
  send(message: JsonRpcMessage): void {
    const id = `${this.id}${SEPARATOR}${++this.#seq}`;
    this.#options.log
      .append(this.logKey, { id, message: message as unknown as JsonObject })
      .catch(this.#options.onError);
    if (this.#holding) this.#holding.push({ id, message });
    else this.#writer?.send(message, id);
  }

  /** Writes an event with an id and no data, so the client has a `Last-Event-ID` at once. */
  prime(writer: SseStream): void {
    const id = `${this.id}${SEPARATOR}${++this.#seq}`;
    this.#options.log.append(this.logKey, { id, message: {} }).catch(this.#options.onError);
    writer.raw(`id: ${id}\ndata: \n\n`);
  }

  /**
   * Resumes on a new connection: replays what followed `lastEventId` from the log, then goes on
   * live. Events sent while the log is read are held back and deduplicated, so none is lost or
   * doubled.
   */
  async resume(writer: SseStream, lastEventId: string): Promise<void> {
    const held: { id: string; message: JsonRpcMessage }[] = [];
    this.#holding = held;
    try {
      const replay = (await this.#options.log.after(this.logKey, lastEventId)) ?? [];
      const seen = new Set<string>();
      for (const event of [...replay, ...held]) {
        if (seen.has(event.id) || Object.keys(event.message).length === 0) continue;
        seen.add(event.id);
        writer.send(event.message as JsonRpcMessage, event.id);
      }
    } finally {
      this.#holding = undefined;
    }
    this.attach(writer);
  }

  /** Attaches a connection, replacing (and closing) any earlier one. */
  attach(writer: SseStream): void {
    if (this.#writer && this.#writer !== writer) this.#writer.close();
    this.#writer = writer;
    writer.onClose(() => {
      if (this.#writer === writer) this.#writer = undefined;
    });
    if (this.#ended) writer.close();
  }

  /** Writes an SSE comment to the current connection. */
  keepAlive(): void {
    this.#writer?.raw(":\n\n");
  }

  /** Closes the current connection, asking the client to come back after `retryMs` (polling). */
  detach(retryMs: number): void {
    this.#writer?.raw(`retry: ${retryMs}\n\n`);
    this.#writer?.close();
    this.#writer = undefined;
  }

  /** Ends the stream: the connection closes after what was written. */
  end(): void {
    this.#ended = true;
    this.#writer?.close();
  }
}
