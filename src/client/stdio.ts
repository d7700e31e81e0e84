import { type ChildProcess, spawn } from "node:child_process";
import type { JsonRpcMessage } from "../protocol/messages.js";
import { MessageWire } from "./wire.js";

/** Options of {@link stdio}. */
export interface StdioOptions {
  /** The program to run. */
  command: string;
  args?: readonly string[];
  /** Variables added to the environment. */
  env?: Record<string, string>;
  /**
   * What the child inherits of this process's environment: all of it, nothing, or only the
   * variables a program needs to run (PATH, HOME, USER, locale, temp folders), so API keys
   * in our environment do not reach a server by accident. @default "safe"
   */
  inheritEnv?: boolean | "safe";
  cwd?: string;
  /**
   * The server's stderr (its logs): passed through to ours, ignored, or handed to a function
   * chunk by chunk. @default "inherit"
   */
  stderr?: "inherit" | "ignore" | ((chunk: string) => void);
  /** How long `close()` waits for the server to exit after stdin ends, before SIGTERM. @default 2000 */
  closeTimeoutMs?: number;
}

/** Variables a child needs to run, on POSIX and on Windows. */
const SAFE_VARIABLES = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TZ",
  "APPDATA",
  "HOMEDRIVE",
  "HOMEPATH",
  "LOCALAPPDATA",
  "PATHEXT",
  "PROCESSOR_ARCHITECTURE",
  "PROGRAMFILES",
  "SYSTEMDRIVE",
  "SYSTEMROOT",
  "TEMP",
  "TMP",
  "USERNAME",
  "USERPROFILE",
];

function inherited(mode: boolean | "safe"): NodeJS.ProcessEnv {
  if (mode === true) return process.env;
  if (mode === false) return {};
  const env: NodeJS.ProcessEnv = {};
  for (const name of SAFE_VARIABLES) {
    const value = process.env[name];
    // Values that look like shell functions are not passed on (they can run code).
    if (value !== undefined && !value.startsWith("()")) env[name] = value;
  }
  return env;
}

/** Most stderr kept for the error of a server that exits early. */
const STDERR_TAIL = 2_000;

/**
 * The stdio transport: spawns a server and speaks newline-delimited JSON-RPC on its stdin and
 * stdout (spec: transports, stdio). `close()` ends stdin, then the child.
 */
export class StdioWire extends MessageWire {
  readonly child: ChildProcess;
  private readonly closeTimeoutMs: number;
  private stderrTail = "";
  private readonly exited: Promise<void>;

  constructor(options: StdioOptions) {
    const child = spawn(options.command, [...(options.args ?? [])], {
      cwd: options.cwd,
      env: { ...inherited(options.inheritEnv ?? "safe"), ...options.env },
      stdio: ["pipe", "pipe", typeof options.stderr === "string" ? options.stderr : "pipe"],
      windowsHide: true,
    });
    super("stdio", (message) => this.send(message));
    this.child = child;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 2_000;
    const onStderr = options.stderr;
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
      if (typeof onStderr === "function") onStderr(chunk);
    });
    this.readLines();
    // A child that dies mid-write breaks the pipe: fail the requests instead of crashing.
    child.stdin?.on("error", (error) => this.fail(error));
    this.exited = new Promise((resolve) => {
      child.once("error", (error) => {
        this.fail(error);
        resolve();
      });
      child.once("exit", (code, signal) => {
        const tail = this.stderrTail.trim();
        this.fail(
          new Error(
            `Server process exited (${signal ?? `code ${code}`})${tail ? `: ${tail}` : ""}`,
          ),
        );
        resolve();
      });
    });
  }

  private readLines(): void {
    let buffer = "";
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        const line = buffer.slice(0, at).trim();
        buffer = buffer.slice(at + 1);
        if (!line) continue;
        try {
          this.receive(JSON.parse(line));
        } catch {
          // Not JSON-RPC: a server printing to stdout by mistake. Skip the line.
        }
      }
    });
  }

  private send(message: JsonRpcMessage): Promise<void> {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) {
      return Promise.reject(new Error("The server process is not running"));
    }
    return new Promise((resolve, reject) => {
      stdin.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Ends stdin, waits for the server to exit, then sends SIGTERM and at last SIGKILL. */
  override async close(): Promise<void> {
    await super.close();
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    const waited = (ms: number) =>
      Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
      ]);
    if (await waited(this.closeTimeoutMs)) return;
    child.kill("SIGTERM");
    if (await waited(this.closeTimeoutMs)) return;
    child.kill("SIGKILL");
    await this.exited;
  }
}

/**
 * Spawns an MCP server to speak to over stdio: `McpClient.connect(stdio({ command, args }))`.
 *
 * @example
 * ```ts
 * import { McpClient } from "mcp-mount/client";
 * import { stdio } from "mcp-mount/client/stdio";
 *
 * const client = await McpClient.connect(stdio({ command: "node", args: ["server.js"] }));
 * console.log((await client.tools()).map((tool) => tool.name));
 * await client.close();
 * ```
 */
export function stdio(options: StdioOptions): StdioWire {
  return new StdioWire(options);
}
