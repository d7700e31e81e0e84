import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

// What the servers whose memory a benchmark reads have in common: run with --expose-gc and
// forked with IPC, each listens on loopback, sends its port once listening, answers "heap" with
// its memory after forced GCs, and exits when its parent disconnects.

/** What the parent reads. */
export interface HeapMessage {
  heapUsed: number;
  external: number;
  rss: number;
}

/** Serves `listener` for streams that stay open, reporting to the parent over IPC. */
export function serveForMemoryReads(listener: RequestListener): void {
  const server = createServer(listener);
  server.keepAliveTimeout = 600_000;
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  server.listen(0, "127.0.0.1", () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
  process.on("message", async (message) => {
    if (message !== "heap") return;
    for (let i = 0; i < 6; i++) {
      globalThis.gc?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { heapUsed, external, rss } = process.memoryUsage();
    process.send?.({ heapUsed, external, rss } satisfies HeapMessage);
  });
  process.on("disconnect", () => process.exit(0));
}
