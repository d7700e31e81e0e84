import { ErrorCode, type McpError } from "../../../protocol/errors.js";
import {
  EventsNotification,
  type EventOccurrence,
  SUBSCRIPTION_ID_META,
} from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { compareSeq, type EventFeedStore } from "../../../store/types.js";
import type { ExtensionRequest } from "../../extension.js";
import { encodeCursor, positionBefore } from "./cursor.js";
import { occurrenceFor, type StartPoint, type Subscription } from "./reader.js";

/** Entries one read of a push stream takes at once; it reads again while there are more. */
const BATCH = 256;

/** What a push stream needs of its handler. */
export interface PushContext {
  feeds: EventFeedStore;
  heartbeatMs: number;
  onError(error: unknown): void;
}

/**
 * One `events/stream` subscription (SEP-3415, Push-Based Delivery): `active` first, then each
 * occurrence for it with its cursor, and a heartbeat with the position checked up to. Every
 * read starts from the stream's own position, whatever woke it (a bus wake-up, the heartbeat),
 * so an occurrence is sent once and in feed order however the wake-ups arrive. It ends when
 * the client goes away (no result: there is nobody to send it to) or the server ends it
 * (the empty result, after `terminated` when the subscription ended for a reason).
 */
export class PushStream {
  readonly name: string;
  readonly #context: PushContext;
  readonly #subscription: Subscription;
  readonly #request: ExtensionRequest;
  readonly #meta: JsonObject;
  #position: string;
  /** The read running now; a wake-up meanwhile asks for one more after it. */
  #reading: Promise<void> | undefined;
  #again = false;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #finish: ((result: JsonObject) => void) | undefined;
  readonly #done: Promise<JsonObject>;

  constructor(
    context: PushContext,
    subscription: Subscription,
    request: ExtensionRequest,
    start: StartPoint,
  ) {
    this.#context = context;
    this.#subscription = subscription;
    this.#request = request;
    this.name = subscription.event.descriptor.name;
    this.#meta = { [SUBSCRIPTION_ID_META]: request.ctx.requestId };
    this.#position = start.position;
    this.#done = new Promise((resolve) => {
      this.#finish = resolve;
    });
    this.#send(EventsNotification.active, {
      cursor: encodeCursor(this.name, start.position),
      truncated: start.truncated,
    });
    this.#heartbeat = setInterval(() => this.#beat(), context.heartbeatMs);
    request.env.abort.onAbort(() => this.#stop());
    this.wake();
  }

  /** Resolves to the stream's result once it ended, whichever side ended it. */
  get done(): Promise<JsonObject> {
    return this.#done;
  }

  /** Reads what was appended since the last read (a wake-up from the bus). */
  wake(): void {
    if (!this.#finish) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = this.#readAll().finally(() => {
      this.#reading = undefined;
    });
  }

  /**
   * Ends the stream from the server's side: `terminated` with `error` first when the
   * subscription itself ended (its event type removed), then the empty result.
   */
  end(error?: McpError): void {
    if (!this.#finish) return;
    if (error) this.#send(EventsNotification.terminated, { error: error.toJSON() });
    this.#stop({ _meta: this.#meta });
  }

  #stop(result: JsonObject = {}): void {
    const finish = this.#finish;
    if (!finish) return;
    this.#finish = undefined;
    clearInterval(this.#heartbeat);
    finish(result);
  }

  async #readAll(): Promise<void> {
    do {
      this.#again = false;
      try {
        if (await this.#readOnce()) this.#again = true;
      } catch (error) {
        // The store failed: the next wake-up or heartbeat reads again from the same position.
        this.#context.onError(error);
        return;
      }
    } while (this.#again && this.#finish);
  }

  /** One read from the stream's position; true when a full batch came (there may be more). */
  async #readOnce(): Promise<boolean> {
    const read = await this.#context.feeds.read(this.name, this.#position, BATCH);
    if (!this.#finish) return false;
    const first = read.entries[0];
    if (read.truncated) {
      // Fell behind the retention while streaming: a gap, announced as the text asks.
      this.#position = first ? positionBefore(first.seq) : read.head;
      this.#send(EventsNotification.active, {
        cursor: encodeCursor(this.name, this.#position),
        truncated: true,
      });
    }
    for (const entry of read.entries) {
      if (!this.#finish) return false;
      this.#position = entry.seq;
      let occurrence: EventOccurrence | undefined;
      try {
        occurrence = await occurrenceFor(this.#subscription.event, this.#subscription, entry);
      } catch (error) {
        this.#context.onError(error);
        this.#send(EventsNotification.error, {
          error: { code: ErrorCode.InternalError, message: "InternalError" },
        });
        continue;
      }
      if (!occurrence) continue;
      this.#sendEvent(occurrence, entry.seq);
      // A backlog goes out at the reader's pace: its transport drops a reader left too far behind.
      await this.#request.env.writable?.();
    }
    if (!first && compareSeq(read.head, this.#position) > 0) this.#position = read.head;
    return read.entries.length === BATCH;
  }

  #beat(): void {
    // The periodic read makes up for a wake-up the bus lost; the heartbeat follows it.
    this.wake();
    const reading = this.#reading ?? Promise.resolve();
    void reading.then(() => {
      if (this.#finish)
        this.#send(EventsNotification.heartbeat, {
          cursor: encodeCursor(this.name, this.#position),
        });
    });
  }

  #sendEvent(occurrence: EventOccurrence, seq: string): void {
    const meta = occurrence._meta ? { ...occurrence._meta, ...this.#meta } : this.#meta;
    this.#send(EventsNotification.event, {
      ...occurrence,
      cursor: encodeCursor(this.name, seq),
      _meta: meta,
    });
  }

  #send(method: string, params: JsonObject): void {
    if (this.#request.env.abort.aborted) return;
    const sent = this.#request.env.send({
      jsonrpc: "2.0",
      method,
      params: { ...params, _meta: params._meta ?? this.#meta },
    });
    if (sent) sent.catch(this.#context.onError);
  }
}
