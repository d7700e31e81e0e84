import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";

/** What a benchmark server process tells its parent once it listens. */
export interface ReadyMessage {
  port: number;
}

/** A server process's answer to "cpu": its CPU time so far (user + system), in microseconds. */
export interface CpuMessage {
  cpuMicros: number;
}

/**
 * Serves `listener` on an ephemeral loopback port, reports the port to the parent over IPC,
 * answers "cpu" with its CPU time, and exits cleanly on "stop" or when the parent goes away (so
 * `--cpu-prof` gets to write).
 */
export function serve(listener: RequestListener): void {
  const server = createServer(listener);
  server.keepAliveTimeout = 30_000;
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    process.send?.({ port } satisfies ReadyMessage);
  });
  const stop = () => {
    server.closeAllConnections();
    server.close();
    process.exit(0);
  };
  process.on("message", (message) => {
    if (message === "stop") stop();
    if (message === "cpu") {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpuMicros: user + system } satisfies CpuMessage);
    }
  });
  process.on("disconnect", stop);
  process.on("SIGTERM", stop);
}

/** The text every `echo` tool description carries. */
export const ECHO_DESCRIPTION = "Returns the text it is given";
