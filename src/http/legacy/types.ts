import type { AuthInfo } from "../../server/types.js";
import type { Caller } from "../caller.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import type { LegacyMessage } from "./incoming.js";

/** Options of the legacy era (protocol 2025-03-26 to 2025-11-25). */
export interface LegacyOptions {
  /** Serve legacy clients with no session at all, for serverless hosts. @default false */
  stateless?: boolean;
  /** Most live sessions; the longest idle are evicted beyond it. @default 50_000 */
  maxSessions?: number;
  /**
   * Most live sessions one client (its principal, else its client id, else its address) has,
   * counted in the store: one figure for every process sharing it. An `initialize` beyond it ends
   * the client's own least recently used sessions, never another client's and never one that is
   * active (a GET stream open, a POST stream or request running, on any live process); when all
   * of them are active, the `initialize` is refused with 429 instead. @default 1_000
   */
  maxSessionsPerClient?: number;
  /** Longest wait for a client's answer to a server request. @default 300_000 */
  requestTimeoutMs?: number;
  /** `retry:` hint, in ms, when the server closes a stream early (2025-11-25 polling). @default 1_000 */
  retryMs?: number;
  /** How often GET streams left by their clients are checked against expired sessions. @default 60_000 */
  sweepIntervalMs?: number;
  /**
   * How long a GET stream whose client left goes on logging for a resumption with
   * `Last-Event-ID` (here or on another process); after it, what it missed is not kept.
   * @default 120_000
   */
  resumeWindowMs?: number;
  /**
   * How often a POST stream resumed on this process, whose request runs on another, sends a
   * keep-alive and checks that the other process is still there (its presence in the store,
   * which lapses 15 s after the process stopped renewing it); once it is gone, the stream ends
   * with a retryable error. @default 10_000
   */
  resumeCheckMs?: number;
}

/** The legacy options with their defaults applied. */
export type LegacySettings = Required<Omit<LegacyOptions, "stateless">>;

/** How the endpoint serves legacy clients: with sessions, or statelessly. */
export interface LegacyEra {
  /** True when legacy clients are served without sessions (no GET, no DELETE). */
  readonly stateless: boolean;
  /** Legacy sessions this process holds state for (streams, waits, running requests). */
  readonly sessionsHeld: number;
  /** Serves a POST: `initialize`, or a message of a session; at once where it can. */
  post(
    req: McpHttpRequest,
    message: LegacyMessage,
    caller?: Caller,
  ): McpHttpResponse | Promise<McpHttpResponse>;
  /** Serves a GET: a session's standalone stream, or the resumption of any of its streams. */
  get(req: McpHttpRequest, auth?: AuthInfo): Promise<McpHttpResponse>;
  /** Serves a DELETE: ends the session and its streams. */
  delete(req: McpHttpRequest, auth?: AuthInfo): Promise<McpHttpResponse>;
  /** The first step of a drain: refuse new work, hand long-lived streams to other processes. */
  handOver(): Promise<void>;
  /** Ends what this process holds (shutdown). */
  close(): Promise<void>;
}
