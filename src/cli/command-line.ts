import { parseArgs } from "node:util";
import type { Era } from "../client/index.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { defaultTokenStore } from "./login.js";
import { parseServe, SERVE_USAGE, type ServeOptions } from "./serve-options.js";
import { UsageError } from "./usage-error.js";

export { UsageError };

/** What `mcp-mount --help` prints. */
export const USAGE = `Usage:
  mcp-mount inspect <url | command [args...]>          server info, tools, prompts, resources
  mcp-mount call <url | "command args"> <tool> [json]  call a tool with JSON arguments
  mcp-mount login <url>                                sign in to a server that asks for OAuth
  mcp-mount logout <url>                               forget the tokens kept for a server
  mcp-mount events <url | command> [--follow <name>]   list event types, or follow one
${SERVE_USAGE}

Options of the other commands (recognised anywhere on the line, up to "--"):
  -H, --header "Name: value"   add an HTTP header (repeatable), e.g. Authorization
  --era modern|legacy|auto     force an era, or detect it (default auto)
  --timeout <ms>               wait for an answer: to connect and per round trip
                               (default 60000; 0 waits for ever)
  --json                       print JSON instead of text (inspect; call always does)
  --open                       open the sign-in page in a browser (else its URL is printed)
  --token-store <file>         where OAuth tokens are kept, owner-only (default
                               ~/.config/mcp-mount/tokens.json)
  --follow <name>              events: print the type's occurrences as they come, till Ctrl-C
  --args <json>                events: the subscription's arguments (default {})
  --poll, --push               events: follow by polling or by a held stream (default push
                               when the event type offers it)
  -h, --help

A server that asks for OAuth is signed in to when needed (login, a first call or inspect, a
call that needs more scope): the sign-in URL is printed, the redirect awaited on 127.0.0.1.

Everything after "--" goes to the server command verbatim, its own options too. An unknown
option or a leftover argument before it is refused (exit 2):
  mcp-mount inspect --json -- node --import tsx server.ts
  mcp-mount call https://example.com/mcp whoami '{}' -H "Authorization: Bearer …"`;

/** Where the server is: a Streamable HTTP URL, or a program to run and speak stdio with. */
export type Target =
  | { kind: "http"; url: string }
  | { kind: "stdio"; command: string; args: string[] };

/** How the CLI's client connects, from its options. */
export interface ClientFlags {
  headers: Record<string, string>;
  era: Era | "auto";
  /** Milliseconds to connect, and per round trip; 0 for no limit. */
  timeoutMs: number;
  /** The file of the OAuth token store. */
  tokenStore: string;
  /** Open the sign-in page in a browser. */
  open: boolean;
}

/** What one command line asks for. */
export type CommandLine =
  | { command: "help" }
  | { command: "inspect"; target: Target; json: boolean; flags: ClientFlags }
  | { command: "call"; target: Target; tool: string; args: JsonObject; flags: ClientFlags }
  | { command: "login"; url: string; flags: ClientFlags }
  | { command: "logout"; url: string; flags: ClientFlags }
  | { command: "events"; target: Target; json: boolean; follow?: Follow; flags: ClientFlags }
  | { command: "serve"; options: ServeOptions };

/** What `events --follow` asks for: an event type, its arguments, and how to receive it. */
export interface Follow {
  name: string;
  args: JsonObject;
  delivery: "poll" | "push" | undefined;
}

const OPTIONS = {
  header: { type: "string", short: "H", multiple: true },
  era: { type: "string", default: "auto" },
  timeout: { type: "string", default: "60000" },
  json: { type: "boolean", default: false },
  open: { type: "boolean", default: false },
  "token-store": { type: "string" },
  follow: { type: "string" },
  args: { type: "string" },
  poll: { type: "boolean", default: false },
  push: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

/**
 * Reads argv: our options wherever they stand up to `--`, the rest positionals. Anything
 * unknown or left over is a {@link UsageError}, so a misplaced option never goes unnoticed.
 */
export function parseCommandLine(argv: string[]): CommandLine {
  // serve has options of its own, and runs a command whose options follow "--".
  if (argv[0] === "serve") {
    const options = parseServe(argv.slice(1));
    return options ? { command: "serve", options } : { command: "help" };
  }
  const { values, positionals } = parse(argv);
  if (values.help) return { command: "help" };
  const [command, ...rest] = positionals;
  if (command === undefined) {
    throw new UsageError("name a command: inspect, call, login, logout, events or serve");
  }
  if (command !== "events") refuseEventOptions(values);
  const flags: ClientFlags = {
    headers: toHeaders(values.header ?? []),
    era: toEra(values.era),
    timeoutMs: toTimeout(values.timeout),
    tokenStore: values["token-store"] ?? defaultTokenStore(),
    open: values.open,
  };
  if (command === "inspect") {
    return { command, target: toTarget(rest), json: values.json, flags };
  }
  if (command === "call") {
    const [server, tool, json, extra] = rest;
    if (server === undefined || tool === undefined) {
      throw new UsageError('call needs a server and a tool: call <url | "command"> <tool> [json]');
    }
    if (extra !== undefined) {
      throw new UsageError(
        `unexpected argument ${extra}: call takes a server, a tool and JSON; a command with arguments is one quoted word`,
      );
    }
    return { command, target: toTarget([server]), tool, args: toArguments(json), flags };
  }
  if (command === "login" || command === "logout") {
    const target = toTarget(rest);
    if (target.kind !== "http") throw new UsageError(`${command} takes a server's URL`);
    return { command, url: target.url, flags };
  }
  if (command === "events") {
    return { command, target: toTarget(rest), json: values.json, ...toFollow(values), flags };
  }
  throw new UsageError(
    `unknown command ${command}: inspect, call, login, logout, events or serve (serve comes first)`,
  );
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(unknownOption(argv) ?? (error instanceof Error ? error.message : ""));
  }
}

/** Names the first option we do not know, and where a server command's own options go. */
function unknownOption(argv: string[]): string | undefined {
  const { tokens } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "option" && !Object.hasOwn(OPTIONS, token.name)) {
      return `unknown option ${token.rawName} (a server command's own options go after --, as in: mcp-mount inspect -- node ${token.rawName} server.js)`;
    }
  }
  return undefined;
}

function toHeaders(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(":");
    if (at <= 0) throw new UsageError(`-H takes "Name: value", not "${line}"`);
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return headers;
}

function toEra(era: string): Era | "auto" {
  if (era === "modern" || era === "legacy" || era === "auto") return era;
  throw new UsageError(`--era is modern, legacy or auto, not "${era}"`);
}

function toTimeout(ms: string): number {
  if (!/^\d+$/.test(ms)) throw new UsageError(`--timeout takes milliseconds, not "${ms}"`);
  return Number(ms);
}

type Values = ReturnType<typeof parse>["values"];

function refuseEventOptions(values: Values): void {
  if (values.follow !== undefined || values.args !== undefined || values.poll || values.push) {
    throw new UsageError("--follow, --args, --poll and --push go with the events command");
  }
}

function toFollow(values: Values): { follow?: Follow } {
  if (values.follow === undefined) {
    if (values.args !== undefined || values.poll || values.push) {
      throw new UsageError("--args, --poll and --push need --follow <name>");
    }
    return {};
  }
  if (values.poll && values.push) throw new UsageError("--poll or --push, not both");
  const delivery = values.poll ? "poll" : values.push ? "push" : undefined;
  return { follow: { name: values.follow, args: toArguments(values.args, "--args"), delivery } };
}

function toArguments(json: string | undefined, what = "the tool's arguments"): JsonObject {
  if (json === undefined) return {};
  let args: unknown;
  try {
    args = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`${what} are not JSON: ${String(error)}`);
  }
  if (!isObject(args)) throw new UsageError(`${what} are a JSON object, not ${json}`);
  return args;
}

/** A URL alone, a command and its arguments, or a whole command in one quoted word. */
function toTarget([first, ...rest]: string[]): Target {
  if (first === undefined) throw new UsageError("name a server: a URL or a command");
  if (/^https?:\/\//.test(first)) {
    if (rest[0] !== undefined) {
      throw new UsageError(`unexpected argument ${rest[0]}: a URL takes no arguments`);
    }
    return { kind: "http", url: first };
  }
  const [command, ...args] = rest.length === 0 ? splitCommand(first) : [first, ...rest];
  if (command === undefined) throw new UsageError("name a server: a URL or a command");
  return { kind: "stdio", command, args };
}

/** Splits a command line on spaces, keeping quoted parts together. */
function splitCommand(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}
