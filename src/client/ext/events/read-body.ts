/** A body over the receiver's ceiling: answered 413, never retried (SEP-3415, delivery profile). */
export class TooLarge extends Error {
  constructor() {
    super("The body is over the ceiling");
    this.name = "TooLarge";
  }
}

/**
 * The raw body bytes, exactly as received (the signature covers them), read no further than
 * `maxBytes`: a `Content-Length` over it is refused before reading, a stream is cut once over.
 */
export async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) throw new TooLarge();
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new TooLarge();
    }
    chunks.push(value);
  }
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
