import { Redis } from "ioredis";

const QUEUE_STATE = /^Command queue state error/;

/**
 * A connection in MONITOR mode, resolved once it reads monitored lines as such.
 *
 * ioredis's own `monitor()` switches to monitoring a microtask after MONITOR's `OK`, so lines
 * that arrive in the same read (another client's commands, a Cluster refreshing its slots)
 * are taken for replies nobody waits for: it emits "Command queue state error", which rejects
 * `monitor()` and, for a second line, throws as an unhandled error. Those lines came before
 * anything the caller does next, so they are dropped here; any other error still throws.
 */
export async function startMonitor(from: Redis | string): Promise<Redis> {
  const options = { monitor: true, lazyConnect: false } as const;
  const monitor = typeof from === "string" ? new Redis(from, options) : from.duplicate(options);
  let monitoring = false;
  monitor.on("error", (error: Error) => {
    if (!monitoring && QUEUE_STATE.test(error.message)) return;
    throw error;
  });
  await new Promise<void>((resolve, reject) => {
    monitor.once("monitoring", () => {
      monitoring = true;
      resolve();
    });
    monitor.once("end", () => reject(new Error("MONITOR connection ended before it started")));
  });
  return monitor;
}
