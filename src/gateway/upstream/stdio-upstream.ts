import { McpClient } from "../../client/client.js";
import type { McpClientOptions } from "../../client/options.js";
import type { Upstream } from "../types.js";
import { upstreamClientOptions } from "./client-options.js";
import type { Connect } from "./connection.js";
import { retryableError } from "./retryable.js";
import { type SupervisionOptions, supervised } from "./supervised.js";

/**
 * Options of {@link stdioUpstream}: the program, and how its children are supervised (`scope`
 * gives one child per legacy session or principal).
 */
export interface StdioUpstreamOptions extends SupervisionOptions {
  /** The program to run. */
  command: string;
  args?: string[];
  /** Variables added to the child's environment. */
  env?: Record<string, string>;
  /**
   * What the child inherits of this process's environment: all of it, nothing, or only what a
   * program needs to run (PATH, HOME, locale...), so secrets reach it only through `env`.
   * @default "safe"
   */
  inheritEnv?: boolean | "safe";
  cwd?: string;
  /** How long a closing child gets after its stdin ends, then after SIGTERM, before SIGKILL. @default 2_000 */
  closeTimeoutMs?: number;
  /** Receives the child's stderr, line by line. @default console.error, prefixed with the command */
  onStderr?: (line: string) => void;
  /**
   * How the gateway's client speaks to the child (era, `onInput`, `timeoutMs`...).
   * @default no `timeoutMs`, and an `onInput` declaring elicitation, sampling and roots, which
   * each forwarded call answers with its own
   */
  clientOptions?: McpClientOptions;
}

/** Hands text on line by line; the last unfinished line when `flush` is called. */
function lineSplitter(onLine: (line: string) => void) {
  let buffer = "";
  return {
    push(chunk: string) {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        onLine(buffer.slice(0, at).replace(/\r$/, ""));
        buffer = buffer.slice(at + 1);
      }
    },
    flush() {
      if (buffer) onLine(buffer);
      buffer = "";
    },
  };
}

function connectStdio(options: StdioUpstreamOptions, name: string): Connect {
  const onStderr = options.onStderr ?? ((line: string) => console.error(`[${name}] ${line}`));
  return async (signal) => {
    const stderr = lineSplitter(onStderr);
    // Loaded here, not imported: it spawns processes, which Web-standard runtimes cannot.
    const { UpstreamStdioWire } = await import("./stdio-wire.js");
    const wire = new UpstreamStdioWire({
      command: options.command,
      args: options.args ?? [],
      ...(options.env ? { env: options.env } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      inheritEnv: options.inheritEnv ?? "safe",
      stderr: (chunk) => stderr.push(chunk),
      ...(options.closeTimeoutMs !== undefined ? { closeTimeoutMs: options.closeTimeoutMs } : {}),
    });
    wire.upstreamName = name;
    // "close" comes after the child's stdio ended, so the last stderr line is in.
    wire.child.once("close", () => stderr.flush());
    const ended = new Promise<Error>((resolve) => {
      wire.child.once("error", () =>
        resolve(retryableError(`The upstream ${name} ${wire.failure ?? "failed"}`)),
      );
      // On "exit", as the wire fails its requests then: no acquire may get the dead client after.
      wire.child.once("exit", (code, signal) =>
        resolve(retryableError(`The upstream ${name} exited (${signal ?? `code ${code}`})`)),
      );
    });
    const given = options.clientOptions?.signal;
    try {
      const client = await McpClient.connect(wire, {
        ...upstreamClientOptions(options.clientOptions),
        signal: given ? AbortSignal.any([given, signal]) : signal,
      });
      return { client, ended };
    } catch (error) {
      // Era detection words a dead child as both eras failing: say how it died instead.
      if (signal.aborted) throw signal.reason;
      throw wire.failure ? new Error(wire.failure, { cause: error }) : error;
    }
  };
}

/**
 * An upstream MCP server run as a child process over stdio (Node only): one child for the
 * gateway process, or one per legacy session or principal with `scope`. A child that exits
 * fails its requests in flight with a retryable error at once and is started again with
 * backoff; its stderr goes to `onStderr` line by line.
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 * import { proxyServer, stdioUpstream } from "mcp-mount/gateway";
 *
 * const upstream = stdioUpstream({
 *   command: "npx",
 *   args: ["-y", "@modelcontextprotocol/server-everything"],
 *   maxConcurrency: 16,
 * });
 * const mcp = createMcpHandler(await proxyServer(upstream));
 * process.on("SIGTERM", async () => {
 *   await mcp.close({ graceMs: 10_000 });
 *   await upstream.close(10_000);
 * });
 * ```
 */
export function stdioUpstream(options: StdioUpstreamOptions): Upstream {
  if (!options.command) throw new TypeError("stdioUpstream needs a command");
  const name = JSON.stringify(options.command);
  const connect = connectStdio(options, name);
  return supervised(name, () => connect, options);
}
