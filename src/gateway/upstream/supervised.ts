import type { Upstream, UpstreamKey, UpstreamScope } from "../types.js";
import type { Connect, RestartOptions, UpstreamRestart } from "./connection.js";
import { UpstreamPool } from "./pool.js";

/** How an upstream's connections are supervised: scope, limits, restarts. */
export interface SupervisionOptions {
  /** One connection for the process, or one per legacy session or principal. @default "process" */
  scope?: UpstreamScope;
  /** Requests one connection serves at once; the others wait in line. @default 32 */
  maxConcurrency?: number;
  /** Most connections of a scope at once; the least recently used idle one is closed first. @default 64 */
  maxUpstreams?: number;
  /** A scoped connection no request used for this long is closed. @default 300_000 */
  idleMs?: number;
  /** Backoff between restarts: doubling, reset after a minute's healthy run. @default { initialMs: 250, maxMs: 30_000 } */
  restart?: RestartOptions;
  /** Longest a request waits for a connection that was open to open again. @default 5_000 */
  restartWaitMs?: number;
  /**
   * Longest one attempt to connect may take (a child's start, its first answer); the first
   * requests wait as long. A failed attempt is retried with backoff. @default 30_000
   */
  startTimeoutMs?: number;
  /** Hears each end or failed start of a connection, and when it is tried again. @default console.error */
  onRestart?: (event: UpstreamRestart) => void;
}

function checkNonNegative(value: number | undefined, name: string): void {
  if (value !== undefined && !(value >= 0)) {
    throw new RangeError(`${name} must be a number of 0 or more`);
  }
}

/**
 * An {@link Upstream} whose connections `connectFor(key)` opens, named `name` in errors,
 * supervised as `options` say; the defaults are merged here, once.
 */
export function supervised(
  name: string,
  connectFor: (key: UpstreamKey) => Connect,
  options: SupervisionOptions,
): Upstream {
  checkNonNegative(options.restart?.initialMs, "restart.initialMs");
  checkNonNegative(options.restart?.maxMs, "restart.maxMs");
  checkNonNegative(options.restartWaitMs, "restartWaitMs");
  checkNonNegative(options.startTimeoutMs, "startTimeoutMs");
  const restart = { initialMs: 250, maxMs: 30_000, ...options.restart };
  const onRestart =
    options.onRestart ??
    ((event: UpstreamRestart) =>
      console.error(`${event.error.message}; trying again in ${event.delayMs} ms`));
  return new UpstreamPool({
    scope: options.scope ?? "process",
    name,
    maxUpstreams: options.maxUpstreams ?? 64,
    idleMs: options.idleMs ?? 300_000,
    connection: (key) => ({
      name,
      connect: connectFor(key),
      maxConcurrency: options.maxConcurrency ?? 32,
      restart,
      restartWaitMs: options.restartWaitMs ?? 5_000,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
    }),
    onRestart,
  });
}
