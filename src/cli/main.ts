#!/usr/bin/env node
import { McpClient, type McpClientOptions } from "../client/index.js";
import { stdio } from "../client/stdio.js";
import { askOnTerminal } from "./ask.js";
import {
  type ClientFlags,
  type CommandLine,
  parseCommandLine,
  type Target,
  USAGE,
  UsageError,
} from "./command-line.js";
import { inspect } from "./inspect.js";
import { type CliSignIn, cliSignIn, login, logout } from "./login.js";

/**
 * Connects within `--timeout`: the client's own timeout counts each round trip once
 * connected, and the deadline is cleared then so it cannot end a stream opened on the way.
 */
async function connect(
  target: Target,
  flags: ClientFlags,
  signIn: CliSignIn | undefined,
): Promise<McpClient> {
  const options: McpClientOptions = {
    headers: flags.headers,
    era: flags.era,
    timeoutMs: flags.timeoutMs,
    clientInfo: { name: "mcp-mount-cli", version: "0.1.0" },
    onInput: { elicitation: askOnTerminal },
    onWarning: (message) => console.error(`warning: ${message}`),
    ...(signIn ? { auth: signIn.auth } : {}),
  };
  const server =
    target.kind === "http"
      ? target.url
      : stdio({ command: target.command, args: target.args, stderr: "ignore" });
  if (flags.timeoutMs === 0) return McpClient.connect(server, options);
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    const message = `The server did not answer within ${flags.timeoutMs} ms (--timeout)`;
    deadline.abort(new DOMException(message, "TimeoutError"));
  }, flags.timeoutMs);
  try {
    return await McpClient.connect(server, { ...options, signal: deadline.signal });
  } finally {
    clearTimeout(timer);
  }
}

type InspectOrCall = Extract<CommandLine, { command: "inspect" | "call" }>;

function hasAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (line.command === "help") {
    console.log(USAGE);
    return 0;
  }
  if (line.command === "login") {
    console.log(await login(line.url, line.flags.tokenStore, line.flags.open));
    return 0;
  }
  if (line.command === "logout") {
    console.log(await logout(line.url, line.flags.tokenStore));
    return 0;
  }
  // Kept tokens, and sign-in when needed, unless the command line brings its own Authorization.
  const signIn =
    line.target.kind === "http" && !hasAuthorization(line.flags.headers)
      ? await cliSignIn(line.flags.tokenStore, line.flags.open)
      : undefined;
  try {
    return await run(line, await connect(line.target, line.flags, signIn));
  } finally {
    await signIn?.close();
  }
}

async function run(line: InspectOrCall, client: McpClient): Promise<number> {
  try {
    if (line.command === "inspect") {
      console.log(await inspect(client, line.json));
      return 0;
    }
    const result = await client.callTool(line.tool, line.args, {
      onProgress: (p) =>
        console.error(
          `progress ${p.progress}${p.total ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`,
        ),
    });
    console.log(JSON.stringify(result, null, 2));
    return result.isError ? 1 : 0;
  } finally {
    await client.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    // fetch hides the reason (refused, DNS, TLS) in its cause.
    const cause = (error as { cause?: { message?: string } })?.cause?.message;
    const shown = cause && !message.includes(cause) ? ` (${cause})` : "";
    console.error(`error: ${message}${shown}`);
    process.exitCode = 1;
  },
);
