import { request as httpRequest, type IncomingMessage } from "node:http";
import { MCP_PATH } from "./request.js";

// Long-lived SSE streams for the stream benchmarks (bench:fanout, bench:memory:streams,
// bench:capacity): each its own loopback connection (raw node:http, no pooling), framed with a
// few string operations per chunk so the reader adds little. A stream counts as open once its
// first event (priming event or acknowledgement) came.

/** Streams (or sessions) being opened at once. */
const OPENING = 100;

/**
 * Opens one SSE request on `port`; resolves once its first event arrived. `onEvent` then gets
 * every later event's text (keep-alive comments left out).
 */
export function openSse(
  port: number,
  method: "GET" | "POST",
  headers: Record<string, string>,
  body?: string,
  onEvent: (event: string) => void = () => {},
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path: MCP_PATH,
      method,
      headers,
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`${method} stream: HTTP ${response.statusCode}`));
        return;
      }
      response.setEncoding("utf8");
      let buffer = "";
      let first = true;
      response.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (event.startsWith(":")) continue;
          if (first) {
            first = false;
            resolve(response);
          } else onEvent(event);
        }
      });
    });
    req.end(body);
  });
}

/** Runs `open` for 0..count-1, {@link OPENING} at a time. */
export async function openAll<T>(count: number, open: (i: number) => Promise<T>): Promise<T[]> {
  const opened: T[] = [];
  for (let start = 0; start < count; start += OPENING) {
    const batch = Array.from({ length: Math.min(OPENING, count - start) }, (_, k) =>
      open(start + k),
    );
    opened.push(...(await Promise.all(batch)));
  }
  return opened;
}
