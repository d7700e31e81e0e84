import type { JsonRpcMessage } from "../../protocol/messages.js";

const encoder = new TextEncoder();

/**
 * Headers of an SSE response, a new object each time (CORS and session headers are added to
 * it); `X-Accel-Buffering: no` keeps proxies from buffering.
 */
export function sseHeaders(): Record<string, string> {
  return {
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
  };
}

/** Most bytes a slow reader may leave unread before its stream is dropped. */
export const MAX_BUFFERED = 4 * 1024 * 1024;

/** Bytes left unread below which a writer that waits ({@link SseStream.writable}) goes on. */
const LOW_MARK = MAX_BUFFERED / 4;

/**
 * Where a host writes a stream's events straight to its connection (the Node bridge), with no
 * ReadableStream, reader or pending read per stream.
 */
export interface SseTarget {
  /** Writes text; false when the reader is too far behind, and the stream is then dropped. */
  write(text: string): boolean;
  /** Ends the response after what was written. */
  end(): void;
  /** Cuts the connection (a reader too slow). */
  destroy(): void;
}

/**
 * One server-sent event stream; writing after it closed is a no-op. Its events go to a
 * {@link SseTarget} when the host attaches one, else to {@link readable}, made when first asked
 * for; what is written before either is kept until then.
 */
export class SseStream {
  #readable: ReadableStream<Uint8Array> | undefined;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #target: SseTarget | undefined;
  #pending: string[] | undefined;
  #closed = false;
  #onClose: (() => void)[] = [];
  /** Writers waiting for the reader to catch up. */
  #waiting: (() => void)[] = [];

  /** The events as a byte stream (for hosts that take a Web body). */
  get readable(): ReadableStream<Uint8Array> {
    this.#readable ??= new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
          for (const text of this.#takePending()) controller.enqueue(encoder.encode(text));
          if (this.#closed) controller.close();
        },
        // Called as the reader takes what was queued: writers waiting may go on.
        pull: () => {
          if (this.#unread() <= LOW_MARK) this.#release();
        },
        cancel: () => this.#markClosed(),
      },
      { highWaterMark: MAX_BUFFERED, size: (chunk) => chunk.byteLength },
    );
    return this.#readable;
  }

  /**
   * Sends the events to `target` instead of {@link readable}, what was written so far first;
   * false when the readable was taken already.
   */
  attach(target: SseTarget): boolean {
    if (this.#readable) return false;
    for (const text of this.#takePending()) target.write(text);
    if (this.#closed) target.end();
    else this.#target = target;
    return true;
  }

  /** Whether {@link attach} can still take the events (nobody asked for the readable yet). */
  get attachable(): boolean {
    return this.#readable === undefined;
  }

  /** The host saw the client go away. */
  cancel(): void {
    this.#target = undefined;
    this.#markClosed();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a JSON-RPC message as one event; false when the stream is closed. */
  send(message: JsonRpcMessage, id?: string): boolean {
    return this.sendJson(JSON.stringify(message), id);
  }

  /** Sends a message already serialised as JSON text (one line) as one event. */
  sendJson(json: string, id?: string): boolean {
    const head = id === undefined ? "event: message\n" : `id: ${id}\nevent: message\n`;
    return this.#write(`${head}data: ${json}\n\n`);
  }

  /** Sends raw SSE text (a comment, a priming event, a retry field). */
  writeRaw(text: string): boolean {
    return this.#write(text);
  }

  /**
   * Resolves once the reader has taken what was written down to a low mark, or the stream
   * closed: a writer with much to send awaits it between events, so a backlog paces itself to
   * the reader instead of overrunning {@link MAX_BUFFERED}. A host's target counts as caught up.
   */
  writable(): Promise<void> {
    if (this.#closed || this.#target || this.#unread() <= LOW_MARK) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Bytes queued in {@link readable} that the reader has not taken yet. */
  #unread(): number {
    const free = this.#controller?.desiredSize;
    return free === undefined || free === null ? 0 : MAX_BUFFERED - free;
  }

  #release(): void {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** Ends the stream after what was written. */
  close(): void {
    if (this.#closed) return;
    const target = this.#target;
    this.#target = undefined;
    if (target) target.end();
    else {
      try {
        this.#controller?.close();
      } catch {
        // already errored by the reader
      }
    }
    this.#markClosed();
  }

  /** Runs `listener` once when the stream closes, from either side. */
  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose.push(listener);
  }

  #write(text: string): boolean {
    if (this.#closed) return false;
    const target = this.#target;
    if (target) {
      if (target.write(text)) return true;
      // The reader stopped reading: drop the stream rather than buffer without bound.
      this.#target = undefined;
      target.destroy();
      this.#markClosed();
      return false;
    }
    const controller = this.#controller;
    if (!controller) {
      this.#pending ??= [];
      this.#pending.push(text);
      return true;
    }
    if ((controller.desiredSize ?? 0) <= 0) {
      controller.error(new Error("SSE reader too slow"));
      this.#markClosed();
      return false;
    }
    controller.enqueue(encoder.encode(text));
    return true;
  }

  #takePending(): string[] {
    const pending = this.#pending ?? [];
    this.#pending = undefined;
    return pending;
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#release();
    for (const listener of this.#onClose.splice(0)) listener();
  }
}
