#!/usr/bin/env node
import { parseArgs } from "node:util";
import { McpClient, type McpClientOptions } from "../client/index.js";
import { stdio } from "../client/stdio.js";
import { askOnTerminal } from "./ask.js";
import { inspect } from "./inspect.js";

const USAGE = `Usage:
  mcp-mount inspect <url | command [args...]>         server info, tools, prompts, resources
  mcp-mount call <url | "command args"> <tool> [json] call a tool with JSON arguments

Options:
  -H, --header "Name: value"   add an HTTP header (repeatable), e.g. Authorization
  --era modern|legacy          skip era detection
  --timeout <ms>               per round trip (default 60000)
  --json                       print JSON instead of text (inspect)
  -h, --help`;

/** Splits a command line on spaces, keeping quoted parts together. */
function splitCommand(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

async function connect(target: string[], options: McpClientOptions): Promise<McpClient> {
  const [first, ...rest] = target;
  if (!first) throw new Error("Name a server: a URL or a command");
  if (/^https?:\/\//.test(first)) return McpClient.connect(first, options);
  const [command, ...args] = rest.length === 0 ? splitCommand(first) : [first, ...rest];
  return McpClient.connect(stdio({ command: command!, args, stderr: "ignore" }), options);
}

/** Options that take a value: the word after them is not a positional. */
const VALUED = new Set(["-H", "--header", "--era", "--timeout"]);

/**
 * Splits argv where the server's target starts (the second positional): options go before
 * it, and after it everything is the target's own, such as a command's `--flags`.
 */
function splitAtTarget(argv: string[]): [string[], string[]] {
  let positionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (VALUED.has(arg)) i++;
    else if (!arg.startsWith("-") && ++positionals === 2) return [argv.slice(0, i), argv.slice(i)];
  }
  return [argv, []];
}

async function main(argv: string[]): Promise<number> {
  const [head, tail] = splitAtTarget(argv);
  const parsed = parseArgs({
    args: head,
    allowPositionals: true,
    options: {
      header: { type: "string", short: "H", multiple: true },
      era: { type: "string" },
      timeout: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const { values } = parsed;
  const [command, ...rest] = [...parsed.positionals, ...tail];
  if (values.help || !command || !["inspect", "call"].includes(command)) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const at = header.indexOf(":");
    if (at > 0) headers[header.slice(0, at).trim()] = header.slice(at + 1).trim();
  }
  const options: McpClientOptions = {
    headers,
    clientInfo: { name: "mcp-mount-cli", version: "0.1.0" },
    onInput: { elicitation: askOnTerminal },
    onWarning: (message) => console.error(`warning: ${message}`),
  };
  if (values.era === "modern" || values.era === "legacy") options.era = values.era;
  if (values.timeout) options.timeoutMs = Number(values.timeout);
  if (command === "inspect") {
    const client = await connect(rest, options);
    try {
      console.log(await inspect(client, values.json === true));
    } finally {
      await client.close();
    }
    return 0;
  }
  const [target, tool, json] = rest;
  if (!target || !tool) {
    console.error(USAGE);
    return 2;
  }
  const args = json ? (JSON.parse(json) as Record<string, unknown>) : {};
  const client = await connect([target], options);
  try {
    const result = await client.callTool(tool, args, {
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
    // fetch hides the reason (refused, DNS, TLS) in its cause.
    const cause = (error as { cause?: { message?: string } })?.cause?.message;
    console.error(
      `error: ${(error as Error)?.message ?? String(error)}${cause ? ` (${cause})` : ""}`,
    );
    process.exitCode = 1;
  },
);
