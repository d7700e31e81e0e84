import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { ErrorCode, McpError } from "../protocol/errors.js";
import type { EventsOptions } from "../server/ext/events/index.js";
import type { McpServer } from "../server/mcp-server.js";
import { StdioSession } from "../server/stdio/session.js";
import { memoryStore } from "../store/memory.js";
import type { McpStore } from "../store/types.js";
import { createTelemetry, type TelemetryOptions } from "../telemetry/telemetry.js";

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** @default process.stdin */
  input?: Readable;
  /** @default process.stdout */
  output?: Writable;
  /** Key material for sealing `requestState`. @default a random per-process key */
  secret?: string | Uint8Array;
  /** @default memoryStore() */
  store?: McpStore;
  /** Reports errors; logs go to stderr, never stdout. @default console.error */
  onError?: (error: unknown) => void;
  /**
   * OpenTelemetry: a SERVER span and `mcp.server.operation.duration` per message, as over HTTP
   * (`network.transport` pipe); `false` turns it off. @default the global providers
   */
  telemetry?: TelemetryOptions | false;
  /**
   * The Events extension (`server.event()`): poll and push on stdio, over `store`'s feeds;
   * `false` turns it off. @default {}
   */
  events?: EventsOptions | false;
}

/** A running stdio server. */
export interface StdioServer {
  /** Resolves once stdin ends and everything is shut down. */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

/** Longest wait, once stdin ended, for the requests still running to answer. */
const STDIN_END_GRACE_MS = 5_000;

/**
 * Serves `server` over newline-delimited JSON-RPC on stdin/stdout (PROTOCOL §4), in both eras:
 * modern requests carry `_meta`; `initialize` opens a legacy session for the process. This file
 * only frames lines; the session logic is `server/stdio/session.ts`.
 *
 * @example
 * ```ts
 * import { McpServer } from "mcp-mount";
 * import { serveStdio } from "mcp-mount/stdio";
 *
 * const server = new McpServer({ name: "notes", version: "1.0.0" });
 * await serveStdio(server).done;
 * ```
 */
export function serveStdio(server: McpServer, options: StdioOptions = {}): StdioServer {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const store = options.store ?? memoryStore();
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const session = new StdioSession(server, {
    send: (message) => output.write(`${JSON.stringify(message)}\n`),
    store,
    secret: options.secret,
    onError,
    telemetry: createTelemetry(options.telemetry),
    events: options.events,
  });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => {
    try {
      readLine(session, line);
    } catch (error) {
      onError(error);
    }
  });
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => {
    markDone = resolve;
  });
  const close = async () => {
    if (session.closed) return;
    const ending = session.close();
    lines.close();
    await ending;
    await store.close();
    markDone();
  };
  // stdin's end: let running requests answer (bounded) before shutting down.
  lines.once("close", async () => {
    await session.drain(STDIN_END_GRACE_MS);
    await close();
  });
  return { done, close };
}

/** Feeds one line of stdin to the session: blank lines are skipped, others must be JSON. */
function readLine(session: StdioSession, line: string): undefined {
  if (line.trim() === "") return;
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return session.refuse(
      new McpError(ErrorCode.ParseError, "Parse error: line is not valid JSON"),
    );
  }
  session.receive(message);
}
