import type { BodyResult, McpHttpRequest, McpHttpResponse } from "./types.js";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Reads a Web stream body, giving up past `limit` bytes (the limit is enforced while reading). */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  declaredLength: string | null,
  limit: number,
): Promise<BodyResult> {
  if (declaredLength !== null && Number(declaredLength) > limit) return { kind: "too-large" };
  if (!body) return { kind: "text", text: "" };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        return { kind: "too-large" };
      }
      chunks.push(value);
    }
  } catch {
    return { kind: "unreadable" };
  }
  const bytes = chunks.length === 1 ? chunks[0]! : concat(chunks, total);
  try {
    return { kind: "text", text: decoder.decode(bytes) };
  } catch {
    return { kind: "unreadable" };
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** What a fetch host may know of a request beyond the `Request` itself. */
export interface FetchOptions<App = unknown> {
  /**
   * The app's context for this request, reaching handlers as `ctx.app`; a function is called
   * once, after the Host and Origin checks, and may be async.
   */
  context?: App | (() => App | Promise<App>);
  /** The server-side address the request arrived on: enables the loopback Host check. */
  localAddress?: string;
  /** The peer's address: the client's, or the proxy's in front of it. */
  remoteAddress?: string;
}

function contextThunk(context: unknown): () => unknown {
  return typeof context === "function" ? (context as () => unknown) : () => context;
}

/** Wraps a Web `Request` as a transport-neutral request. */
export function fromWebRequest(request: Request, options?: FetchOptions<unknown>): McpHttpRequest {
  return {
    method: request.method,
    url: request.url,
    header: (name) => request.headers.get(name),
    body: (limit) => readLimited(request.body, request.headers.get("content-length"), limit),
    signal: request.signal,
    ...(typeof options?.localAddress === "string" && { localAddress: options.localAddress }),
    ...(typeof options?.remoteAddress === "string" && { remoteAddress: options.remoteAddress }),
    ...(options?.context !== undefined && { context: contextThunk(options.context) }),
  };
}

/** Turns a transport-neutral response into a Web `Response`. */
export function toWebResponse(response: McpHttpResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}
