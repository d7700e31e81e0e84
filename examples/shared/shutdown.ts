import type { Server } from "node:http";

/** Options of {@link closeOnSignal}. */
export interface CloseOnSignalOptions {
  /**
   * How long requests in flight may go on after the signal (passed to `release`, which hands it
   * to `mcp.close({ graceMs })`). @default SHUTDOWN_GRACE_MS from the environment, else 10_000
   */
  graceMs?: number;
}

/** What the process may take beyond the grace to write the last answers and close sockets. */
const FLUSH_MS = 2_000;

/**
 * On SIGINT or SIGTERM, once, a rolling-deploy drain: `release(graceMs)` runs first
 * (`mcp.close({ graceMs })`: new requests get 503 + `Connection: close` while the listener stays
 * open, so a load balancer retries them elsewhere; work in flight finishes or is answered with a
 * retryable error), then the HTTP server stops; its connections are closed once their answers
 * are written, and the process exits.
 */
export function closeOnSignal(
  httpServer: Server,
  release: (graceMs: number) => Promise<void>,
  options: CloseOnSignalOptions = {},
): void {
  const graceMs = options.graceMs ?? Number(process.env.SHUTDOWN_GRACE_MS ?? 10_000);
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    // A last resort only: release() answers every request within the grace.
    setTimeout(() => process.exit(1), graceMs + 2 * FLUSH_MS).unref();
    await release(graceMs).catch((error: unknown) => console.error(error));
    httpServer.close(() => process.exit(0));
    httpServer.closeIdleConnections();
    // Every answer is written by now; sockets a client keeps open go after a moment to flush.
    setTimeout(() => httpServer.closeAllConnections(), FLUSH_MS).unref();
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}
