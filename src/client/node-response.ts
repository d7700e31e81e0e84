import type { IncomingMessage } from "node:http";
import { Readable, type Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

/** Statuses whose answers have no body (a Response refuses one). */
const NO_BODY = new Set([204, 205, 304]);

/** The decoder of a `Content-Encoding` fetch decodes; undefined for others (left as they are). */
function decoderOf(coding: string | undefined): Transform | undefined {
  switch (coding?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return createGunzip();
    case "deflate":
      return createInflate();
    case "br":
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

/**
 * The Response for a Node answer: an SSE stream (or any body of unknown length) streams; a
 * body of known length is read whole first, which costs less than a stream per answer. An abort
 * from here on ends the body with the signal's reason, as fetch's does.
 */
export async function toResponse(
  message: IncomingMessage,
  head: boolean,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const status = message.statusCode ?? 0;
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const init = { status, statusText: message.statusMessage ?? "", headers };
  if (head || NO_BODY.has(status)) {
    message.resume();
    return new Response(null, init);
  }
  const onAbort = () => message.destroy(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  message.once("close", () => signal?.removeEventListener("abort", onAbort));
  const decoder = decoderOf(message.headers["content-encoding"]);
  if (decoder) {
    message.on("error", (error) => decoder.destroy(error)).pipe(decoder);
    // A body cancelled half read lets go of the connection too.
    decoder.once("close", () => message.destroy());
    return new Response(Readable.toWeb(decoder) as ReadableStream<Uint8Array>, init);
  }
  const type = message.headers["content-type"] ?? "";
  if (message.headers["content-length"] === undefined || type.startsWith("text/event-stream")) {
    return new Response(Readable.toWeb(message) as ReadableStream<Uint8Array>, init);
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of message) chunks.push(chunk as Buffer);
  } catch (error) {
    throw signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error });
  }
  if (!message.complete) throw new TypeError("fetch failed: the answer was cut short");
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  // A Buffer's memory is a plain ArrayBuffer (never shared), which is what BodyInit takes.
  const view = new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
  return new Response(view, init);
}
