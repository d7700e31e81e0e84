import type { McpClient } from "../../client/client.js";
import type { Upstream, UpstreamKey, UpstreamLease, UpstreamScope } from "../types.js";
import { Connection, type ConnectionOptions, type UpstreamRestart } from "./connection.js";
import { DEFAULT_CLOSE_GRACE_MS } from "./leases.js";
import { retryableError } from "./retryable.js";

/** How a pool of supervised connections is run. */
export interface PoolOptions {
  scope: UpstreamScope;
  /** Names the upstream in errors. */
  name: string;
  /** Cap of scoped connections; the least recently used idle one is closed first. */
  maxUpstreams: number;
  /** Scoped connections are closed after this long without a lease. */
  idleMs: number;
  /** What a connection for `key` is made of, but its callbacks. */
  connection(key: UpstreamKey): Omit<ConnectionOptions, "onOpen" | "onIdle" | "onRestart">;
  onRestart(event: UpstreamRestart, key: UpstreamKey): void;
}

interface Entry {
  key: UpstreamKey;
  connection: Connection;
  idle?: ReturnType<typeof setTimeout> | undefined;
}

type Listener = (client: McpClient, key: UpstreamKey) => void;

/** The connection of requests that carry no key of the scope's kind, never closed while idle. */
const PROCESS_ID = "";

/**
 * An {@link Upstream} over supervised connections: one for the process, or one per legacy
 * session or principal (the process one for requests without), the idle ones closed after
 * `idleMs`, at most `maxUpstreams` of them.
 */
export class UpstreamPool implements Upstream {
  readonly scope: UpstreamScope;
  readonly #options: PoolOptions;
  /** In order of last use, the least recent first. */
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<Listener>();
  /** Connections closed for being idle or the least recently used, until they are. */
  readonly #retiring = new Set<Promise<void>>();
  #closing: Promise<void> | undefined;

  constructor(options: PoolOptions) {
    for (const name of ["maxUpstreams", "idleMs"] as const) {
      if (!(options[name] >= 1)) throw new RangeError(`${name} must be a number of 1 or more`);
    }
    this.scope = options.scope;
    this.#options = options;
  }

  acquire(key: UpstreamKey, signal?: AbortSignal): Promise<UpstreamLease> {
    if (this.#closing) {
      return Promise.reject(retryableError(`The upstream ${this.#options.name} is stopping`));
    }
    const id = this.#idOf(key);
    let entry = this.#entries.get(id);
    if (entry) this.#entries.delete(id);
    else {
      if (!this.#makeRoom()) {
        const message = `Every one of the ${this.#options.maxUpstreams} upstream connections is busy`;
        return Promise.reject(retryableError(message));
      }
      entry = this.#add(id, id === PROCESS_ID ? {} : key);
    }
    this.#entries.set(id, entry);
    clearTimeout(entry.idle);
    entry.idle = undefined;
    return entry.connection.acquire(signal);
  }

  onConnect(listener: Listener): () => void {
    this.#listeners.add(listener);
    // Connections already open are announced at once, so no listener misses one.
    for (const { connection, key } of this.#entries.values()) {
      if (connection.client) listener(connection.client, key);
    }
    return () => this.#listeners.delete(listener);
  }

  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.#closing ??= Promise.all([
      ...[...this.#entries.values()].map((entry) => {
        clearTimeout(entry.idle);
        return entry.connection.close(graceMs);
      }),
      ...this.#retiring,
    ]).then(() => undefined);
    return this.#closing;
  }

  #idOf(key: UpstreamKey): string {
    const value =
      this.scope === "session" ? key.sessionId : this.scope === "principal" ? key.principal : "";
    // Scoped ids are prefixed so that no key can be taken for the process one.
    return value ? `${this.scope}:${value}` : PROCESS_ID;
  }

  #add(id: string, key: UpstreamKey): Entry {
    const entry: Entry = {
      key,
      connection: new Connection({
        ...this.#options.connection(key),
        onOpen: (client) => this.#announce(client, key),
        onIdle: () => this.#idled(id, entry),
        onRestart: (event) => this.#options.onRestart(event, key),
      }),
    };
    return entry;
  }

  #announce(client: McpClient, key: UpstreamKey): void {
    for (const listener of this.#listeners) {
      try {
        listener(client, key);
      } catch (error) {
        console.error(error);
      }
    }
  }

  /** Starts the idle timer of a scoped connection no request holds. */
  #idled(id: string, entry: Entry): void {
    if (id === PROCESS_ID || this.#closing || this.#entries.get(id) !== entry) return;
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      if (entry.connection.busy || this.#entries.get(id) !== entry) return;
      this.#retire(id, entry);
    }, this.#options.idleMs);
    entry.idle.unref?.();
  }

  /** Under the cap, or made so by closing the least recently used idle scoped connection. */
  #makeRoom(): boolean {
    const scoped = [...this.#entries].filter(([id]) => id !== PROCESS_ID);
    if (scoped.length < this.#options.maxUpstreams) return true;
    const idle = scoped.find(([, entry]) => !entry.connection.busy);
    if (!idle) return false;
    const [id, entry] = idle;
    clearTimeout(entry.idle);
    this.#retire(id, entry);
    return true;
  }

  /** Closes a connection no request holds, which `close()` then waits for. */
  #retire(id: string, entry: Entry): void {
    this.#entries.delete(id);
    const closing = entry.connection.close(0).finally(() => this.#retiring.delete(closing));
    this.#retiring.add(closing);
  }
}
