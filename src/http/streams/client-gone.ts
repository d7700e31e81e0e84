import type { McpHttpRequest } from "../types.js";

const nothingToUndo = () => {};

/**
 * Runs `listener` once the client of `req` has left (at once if it has): through the host's
 * `onAbort` where it has one, which saves building an AbortSignal per request, else through
 * `req.signal`. Returns what stops listening (nothing to undo with `onAbort`, whose listeners go
 * with the request).
 */
export function onClientGone(req: McpHttpRequest, listener: () => void): () => void {
  if (req.onAbort) {
    req.onAbort(listener);
    return nothingToUndo;
  }
  const { signal } = req;
  if (signal.aborted) {
    listener();
    return nothingToUndo;
  }
  signal.addEventListener("abort", listener, { once: true });
  return () => signal.removeEventListener("abort", listener);
}
