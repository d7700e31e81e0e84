import type { JsonRpcMessage } from "../protocol/messages.js";

const encoder = new TextEncoder();

/** Headers of every SSE response; `X-Accel-Buffering: no` keeps proxies from buffering. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/** Most bytes a slow reader may leave unread before its stream is dropped. */
const MAX_BUFFERED = 4 * 1024 * 1024;

/** One server-sent event stream; writing after it closed is a no-op. */
export class SseStream {
  readonly readable: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #closed = false;
  #onClose: (() => void)[] = [];

  constructor() {
    this.readable = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        cancel: () => this.#markClosed(),
      },
      { highWaterMark: MAX_BUFFERED, size: (chunk) => chunk.byteLength },
    );
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

  /** Ends the stream after what was written. */
  close(): void {
    if (this.#closed) return;
    try {
      this.#controller.close();
    } catch {
      // already errored by the reader
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
    if ((this.#controller.desiredSize ?? 0) <= 0) {
      // The reader stopped reading: drop the stream rather than buffer without bound.
      this.#controller.error(new Error("SSE reader too slow"));
      this.#markClosed();
      return false;
    }
    this.#controller.enqueue(encoder.encode(text));
    return true;
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#onClose.splice(0)) listener();
  }
}
