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
import { followEvents, listEventTypes } from "./events.js";
import { inspect } from "./inspect.js";
import { type CliSignIn, cliSignIn, login, logout } from "./login.js";
import { printMessage, printOutput } from "./terminal.js";

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
    onWarning: (message) => printMessage(`warning: ${message}`),
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

type InspectOrCall = Extract<CommandLine, { command: "inspect" | "call" | "events" }>;

function hasAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (line.command === "help") {
    printOutput({ text: USAGE });
    return 0;
  }
  if (line.command === "login") {
    printOutput({ text: await login(line.url, line.flags.tokenStore, line.flags.open) });
    return 0;
  }
  if (line.command === "logout") {
    printOutput({ text: await logout(line.url, line.flags.tokenStore) });
    return 0;
  }
  // Loaded only here: the gateway, the HTTP endpoint and node:http are serve's alone.
  if (line.command === "serve") return (await import("./serve.js")).serve(line.options);
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
      printOutput(await inspect(client, line.json));
      return 0;
    }
    if (line.command === "events") return await events(line, client);
    const result = await client.callTool(line.tool, line.args, {
      onProgress: (p) =>
        printMessage(
          `progress ${p.progress}${p.total ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`,
        ),
    });
    printOutput({ json: result });
    return result.isError ? 1 : 0;
  } finally {
    await client.close();
  }
}

/** Lists the event types, or follows one until Ctrl-C (which ends it with exit code 0). */
async function events(line: Extract<CommandLine, { command: "events" }>, client: McpClient) {
  if (!line.follow) {
    printOutput(await listEventTypes(client, line.json));
    return 0;
  }
  const stop = new AbortController();
  const onInterrupt = () => stop.abort(new Error("Interrupted"));
  process.once("SIGINT", onInterrupt);
  process.once("SIGTERM", onInterrupt);
  try {
    await followEvents(client, { ...line.follow, signal: stop.signal });
    return 0;
  } finally {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      printMessage(`error: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    // fetch hides the reason (refused, DNS, TLS) in its cause.
    const cause = (error as { cause?: { message?: string } })?.cause?.message;
    const shown = cause && !message.includes(cause) ? ` (${cause})` : "";
    printMessage(`error: ${message}${shown}`);
    process.exitCode = 1;
  },
);
