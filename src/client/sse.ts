import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";

/** Reads the events of an SSE body; the stream is cancelled when the caller stops early. */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  onRetry?: (ms: number) => void,
  signal?: AbortSignal,
): AsyncGenerator<EventSourceMessage> {
  const reader = body
    // The DOM typings want BufferSource in, which a byte stream is.
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream({ onRetry }))
    .getReader();
  // A body that is not tied to the signal (an in-process Response) is cancelled by hand.
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) return;
      yield value;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Cancelling the response body closes the stream: on modern HTTP that is cancellation.
    await reader.cancel().catch(() => {});
  }
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
