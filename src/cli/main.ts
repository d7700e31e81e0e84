#!/usr/bin/env node
import { McpClient, type McpClientOptions } from "../client/index.js";
import { stdio } from "../client/stdio.js";
import { askOnTerminal } from "./ask.js";
import {
  type ClientFlags,
  parseCommandLine,
  type Target,
  USAGE,
  UsageError,
} from "./command-line.js";
import { inspect } from "./inspect.js";

/**
 * Connects within `--timeout`: the client's own timeout counts each round trip once
 * connected, and the deadline is cleared then so it cannot end a stream opened on the way.
 */
async function connect(target: Target, flags: ClientFlags): Promise<McpClient> {
  const options: McpClientOptions = {
    headers: flags.headers,
    era: flags.era,
    timeoutMs: flags.timeoutMs,
    clientInfo: { name: "mcp-mount-cli", version: "0.1.0" },
    onInput: { elicitation: askOnTerminal },
    onWarning: (message) => console.error(`warning: ${message}`),
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

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (line.command === "help") {
    console.log(USAGE);
    return 0;
  }
  const client = await connect(line.target, line.flags);
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
