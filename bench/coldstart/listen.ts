import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

/** What a cold-start child prints, one JSON line each: milliseconds since its process started. */
export type ColdMessage =
  | { kind: "listening"; port: number; importedMs: number; listeningMs: number }
  | { kind: "answered"; answeredMs: number; cpuMs: number };

const print = (message: ColdMessage) => process.stdout.write(`${JSON.stringify(message)}\n`);

/**
 * Serves `listener` on an ephemeral loopback port, says so on stdout, and says when the first
 * response has been written. `importedMs` is taken by the caller right after its imports, so the
 * figures split the cold start into loading code, building the server and the first request.
 */
export function listen(listener: RequestListener, importedMs: number): void {
  let answered = false;
  const server = createServer((req, res) => {
    if (!answered) {
      answered = true;
      res.once("finish", () => {
        const { user, system } = process.cpuUsage();
        print({ kind: "answered", answeredMs: performance.now(), cpuMs: (user + system) / 1000 });
      });
    }
    listener(req, res);
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    print({ kind: "listening", port, importedMs, listeningMs: performance.now() });
  });
  // The parent ends the child by closing its stdin, so a child never outlives a failed run.
  process.stdin.resume();
  process.stdin.once("end", () => process.exit(0));
}
