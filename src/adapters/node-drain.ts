import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpHttpResponse } from "../http/types.js";

/** Most of a refused body read and dropped before the connection is cut. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** Longest time a refused body is read and dropped before the connection is cut. */
export const DRAIN_MAX_MS = 5_000;

/**
 * Answers a request whose body was refused unread (413), and closes in stages (RFC 9112 §9.6).
 * The response goes out whole at once, framed by Content-Length; it ends, and Node closes the
 * connection, only once the rest of the body has been read and dropped: closing with unread data
 * makes the kernel reset the connection, and a client still uploading then loses the response it
 * has not read yet. Past {@link DRAIN_MAX_BYTES} or {@link DRAIN_MAX_MS}, or once the client
 * leaves, the connection is cut.
 */
export function respondAndDrain(
  req: IncomingMessage,
  res: ServerResponse,
  response: McpHttpResponse,
): Promise<void> {
  const body = typeof response.body === "string" ? response.body : "";
  res.writeHead(response.status, {
    ...response.headers,
    connection: "close",
    "content-length": String(Buffer.byteLength(body)),
  });
  res.write(body);
  if (req.readableEnded) {
    res.end();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    let drained = 0;
    const stopDraining = (complete: boolean) => {
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("error", onCut);
      res.off("close", onCut);
      if (!res.writableEnded && !res.destroyed) res.end();
      // Past a bound, or after an error: the rest of the body is not waited for.
      if (!complete) req.socket.destroy();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_MAX_BYTES) stopDraining(false);
    };
    const onEnd = () => stopDraining(true);
    const onCut = () => stopDraining(false);
    const timer = setTimeout(onCut, DRAIN_MAX_MS);
    req.on("data", onData).once("end", onEnd).once("error", onCut);
    res.once("close", onCut);
    req.resume();
  });
}
