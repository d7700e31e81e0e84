import type { Server } from "node:http";

/** Options of {@link closeOnSignal}. */
export interface CloseOnSignalOptions {
  /** Longest wait before the process exits anyway. @default 5_000 */
  graceMs?: number;
  /** Also cut connections still open once the server stops listening. @default false */
  cutConnections?: boolean;
}

/**
 * On SIGINT or SIGTERM, once: runs `release` (`mcp.close()` first: it ends listen and GET
 * streams with their final messages), stops the HTTP server, and exits when it has closed or
 * after the grace period.
 */
export function closeOnSignal(
  httpServer: Server,
  release: () => Promise<void>,
  options: CloseOnSignalOptions = {},
): void {
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(0), options.graceMs ?? 5_000).unref();
    await release().catch((error: unknown) => console.error(error));
    httpServer.close(() => process.exit(0));
    if (options.cutConnections) httpServer.closeAllConnections();
    else httpServer.closeIdleConnections();
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}
