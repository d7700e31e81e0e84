import type { McpClient } from "../client/client.js";
import type { Implementation } from "../server/types.js";

/**
 * Whose upstream a request uses: the gateway process's own (the default), or one per legacy
 * session or per principal, where the upstream keeps per-client state.
 */
export type UpstreamScope = "process" | "session" | "principal";

/** What picks an upstream connection for one request. */
export interface UpstreamKey {
  /** The legacy session the request belongs to, if any. */
  sessionId?: string | undefined;
  /** The verified principal (subject, else client id), if any. */
  principal?: string | undefined;
}

/** A connection to the upstream, lent for one request (see {@link Upstream.acquire}). */
export interface UpstreamLease {
  readonly client: McpClient;
  /** Gives the connection's concurrency slot back; call once, when the request is done. */
  release(): void;
}

/**
 * An upstream MCP server the gateway forwards to: a stdio program it runs (restarted with
 * backoff when it dies), an HTTP endpoint, or an SDK server object in this process.
 */
export interface Upstream {
  /** How requests pick a connection. @default "process" */
  readonly scope: UpstreamScope;
  /**
   * A connection for a request, connecting (or waiting for a restart) as needed; waits for a
   * concurrency slot. Rejects with a retryable `McpError` (`data.retryable: true`) when the
   * upstream is down or stopping, never hangs past `signal`.
   */
  acquire(key: UpstreamKey, signal?: AbortSignal): Promise<UpstreamLease>;
  /**
   * Calls `listener` with every connection once it is open (the first one, each restart, each
   * scoped one): the gateway reads the upstream's lists from it and hears its notifications.
   * Returns what stops the calls.
   */
  onConnect(listener: (client: McpClient, key: UpstreamKey) => void): () => void;
  /**
   * Stops: new requests are refused (retryable); requests in flight get `graceMs` to finish,
   * then the connections close (a stdio child gets SIGTERM, then SIGKILL).
   */
  close(graceMs?: number): Promise<void>;
}

/** Options of `proxyServer`. */
export interface ProxyServerOptions {
  /** The gateway's own name and version. @default the upstream's, as it introduced itself */
  serverInfo?: Implementation;
  /** Instructions for clients. @default the upstream's */
  instructions?: string;
  /**
   * How long a modern client may take to retry an `input_required` round before the upstream
   * call waiting for its answer is cancelled upstream. @default 300_000
   */
  inputTimeoutMs?: number;
  /** Receives errors no client sees in full (a list that failed to refresh). @default console.error */
  onError?: (error: unknown) => void;
}
