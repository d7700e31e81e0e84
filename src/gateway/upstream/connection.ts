import type { McpClient } from "../../client/client.js";
import type { UpstreamLease } from "../types.js";
import { Leases } from "./leases.js";
import { messageOf, retryableError } from "./retryable.js";
import { Slots } from "./slots.js";

/** An open connection to the upstream. */
export interface Connected {
  readonly client: McpClient;
  /** Settles when the connection ends on its own (the child exited), with why. */
  readonly ended: Promise<Error>;
}

/** Opens one connection to the upstream; `signal` aborts the attempt. */
export type Connect = (signal: AbortSignal) => Promise<Connected>;

/** Backoff between restarts of an upstream connection. */
export interface RestartOptions {
  /** The first delay, doubled after each failure in a row. @default 250 */
  initialMs?: number;
  /** The longest delay. @default 30_000 */
  maxMs?: number;
}

/** A connection that ended or failed to open, and when it is tried again. */
export interface UpstreamRestart {
  /** Why: the exit, or the failure to connect. */
  error: Error;
  /** Failures in a row, this one included (1 after a healthy run). */
  attempt: number;
  /** Milliseconds until the next attempt. */
  delayMs: number;
}

/** How one connection is run. */
export interface ConnectionOptions {
  /** Names the upstream in errors: `The upstream ${name} ...`. */
  name: string;
  connect: Connect;
  maxConcurrency: number;
  restart: Required<RestartOptions>;
  /** Longest an `acquire` waits for a connection that was open before to open again. */
  restartWaitMs: number;
  /** Longest one attempt to connect may take; an `acquire` waits as long for the first one. */
  startTimeoutMs: number;
  onOpen(client: McpClient): void;
  onRestart(event: UpstreamRestart): void;
  /** Called each time the last lease out comes back, or an acquire failed with none out. */
  onIdle(): void;
}

/** A connection open this long before it ended was healthy: the backoff starts over. */
const HEALTHY_MS = 60_000;

type State =
  | { phase: "unopened" }
  | { phase: "connecting"; attempt: AbortController }
  | { phase: "open"; connected: Connected; since: number }
  | { phase: "waiting"; until: number; timer: ReturnType<typeof setTimeout>; error: Error }
  | { phase: "closed" };

/** An acquire waiting for the connection to open. */
interface Opening {
  resolve(client: McpClient): void;
  reject(error: unknown): void;
}

/**
 * One supervised connection to the upstream: opened on first use, opened again with backoff
 * whenever it ends or fails to open, lent to at most `maxConcurrency` requests at once.
 */
export class Connection {
  readonly #options: ConnectionOptions;
  readonly #slots: Slots;
  readonly #leases: Leases;
  readonly #opening = new Set<Opening>();
  #state: State = { phase: "unopened" };
  #failures = 0;
  #everOpened = false;
  /** Acquires not yet settled. */
  #acquiring = 0;
  #closing: Promise<void> | undefined;

  constructor(options: ConnectionOptions) {
    this.#options = options;
    this.#slots = new Slots(options.maxConcurrency);
    this.#leases = new Leases(() => {
      if (!this.busy) options.onIdle();
    });
  }

  /** The client while the connection is open. */
  get client(): McpClient | undefined {
    return this.#state.phase === "open" ? this.#state.connected.client : undefined;
  }

  /** Whether a request holds a lease or waits for one. */
  get busy(): boolean {
    return this.#leases.count > 0 || this.#acquiring > 0;
  }

  /** A lease once a slot is free and the connection open; see `Upstream.acquire`. */
  async acquire(signal?: AbortSignal): Promise<UpstreamLease> {
    this.#acquiring++;
    try {
      if (this.#closing) throw this.#stopping();
      await this.#slots.take(signal);
      try {
        const client = await this.#client(signal);
        return this.#leases.lend(client, () => this.#slots.give());
      } catch (error) {
        this.#slots.give();
        throw error;
      }
    } finally {
      this.#acquiring--;
      if (!this.busy) this.#options.onIdle();
    }
  }

  /** Refuses new requests, gives those in flight `graceMs`, then closes the connection. */
  close(graceMs: number): Promise<void> {
    this.#closing ??= this.#shutDown(graceMs);
    return this.#closing;
  }

  async #shutDown(graceMs: number): Promise<void> {
    const stopping = this.#stopping();
    this.#slots.close(stopping);
    this.#settleOpening((waiter) => waiter.reject(stopping));
    const state = this.#state;
    if (state.phase === "waiting") clearTimeout(state.timer);
    if (state.phase === "connecting") state.attempt.abort(stopping);
    if (state.phase !== "open") this.#state = { phase: "closed" };
    await this.#leases.drained(graceMs);
    const last = this.#state;
    this.#state = { phase: "closed" };
    if (last.phase === "open") await last.connected.client.close().catch(() => {});
  }

  #stopping(): Error {
    return retryableError(`The upstream ${this.#options.name} is stopping`);
  }

  /** The open client, opening or waiting for a restart as needed, within `restartWaitMs`. */
  #client(signal: AbortSignal | undefined): Promise<McpClient> {
    const state = this.#state;
    if (state.phase === "closed" || this.#closing) return Promise.reject(this.#stopping());
    if (state.phase === "open") return Promise.resolve(state.connected.client);
    if (state.phase === "unopened") this.#open();
    if (state.phase === "waiting") {
      const inMs = Math.max(0, state.until - Date.now());
      // A restart further off than the wait allows: no use holding the request.
      if (inMs > this.#options.restartWaitMs) {
        const message = `${state.error.message}; it restarts in ${Math.ceil(inMs / 1000)} s`;
        return Promise.reject(retryableError(message));
      }
    }
    return this.#waitForOpen(signal);
  }

  #waitForOpen(signal: AbortSignal | undefined): Promise<McpClient> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { restartWaitMs, startTimeoutMs } = this.#options;
    const waitMs = this.#everOpened ? restartWaitMs : startTimeoutMs;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#opening.delete(waiter);
      };
      const waiter: Opening = {
        resolve: (client) => {
          done();
          resolve(client);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      };
      const onAbort = () => waiter.reject(signal?.reason);
      const timer = setTimeout(() => {
        const name = this.#options.name;
        waiter.reject(retryableError(`The upstream ${name} did not start within ${waitMs} ms`));
      }, waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#opening.add(waiter);
    });
  }

  #settleOpening(settle: (waiter: Opening) => void): void {
    for (const waiter of [...this.#opening]) settle(waiter);
  }

  #open(): void {
    const attempt = new AbortController();
    this.#state = { phase: "connecting", attempt };
    const ms = this.#options.startTimeoutMs;
    // A program that never answers is stopped, and started again with backoff.
    const timer = setTimeout(() => attempt.abort(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref?.();
    const connecting = this.#options.connect(attempt.signal).finally(() => clearTimeout(timer));
    connecting.then(
      (connected) => this.#opened(attempt, connected),
      (error: unknown) => this.#failed(attempt, error),
    );
  }

  #opened(attempt: AbortController, connected: Connected): void {
    if (this.#state.phase !== "connecting" || this.#state.attempt !== attempt) {
      void connected.client.close().catch(() => {});
      return;
    }
    this.#state = { phase: "open", connected, since: Date.now() };
    this.#everOpened = true;
    void connected.ended.then((error) => this.#ended(connected, error));
    this.#settleOpening((waiter) => waiter.resolve(connected.client));
    this.#options.onOpen(connected.client);
  }

  #failed(attempt: AbortController, error: unknown): void {
    if (this.#state.phase !== "connecting" || this.#state.attempt !== attempt) return;
    const name = this.#options.name;
    const failure = retryableError(
      `The upstream ${name} could not start: ${messageOf(error)}`,
      error,
    );
    this.#settleOpening((waiter) => waiter.reject(failure));
    this.#restart(failure);
  }

  #ended(connected: Connected, error: Error): void {
    const state = this.#state;
    if (state.phase !== "open" || state.connected !== connected) return;
    // The requests it carried have failed already (the wire fails them); this frees the rest.
    void connected.client.close().catch(() => {});
    if (Date.now() - state.since >= HEALTHY_MS) this.#failures = 0;
    this.#restart(error);
  }

  #restart(error: Error): void {
    if (this.#closing) {
      this.#state = { phase: "closed" };
      return;
    }
    const { initialMs, maxMs } = this.#options.restart;
    const delayMs = Math.min(maxMs, initialMs * 2 ** this.#failures++);
    const timer = setTimeout(() => this.#open(), delayMs);
    // A restart pending keeps no process alive by itself.
    timer.unref?.();
    this.#state = { phase: "waiting", until: Date.now() + delayMs, timer, error };
    this.#options.onRestart({ error, attempt: this.#failures, delayMs });
  }
}
