import { parseArgs } from "node:util";
import type { UpstreamScope } from "../gateway/types.js";
import { UsageError } from "./usage-error.js";

/** What `mcp-mount serve --help` prints (part of the CLI's USAGE). */
export const SERVE_USAGE = `  mcp-mount serve [options] -- <command> [args...]     serve a stdio MCP server over HTTP
  mcp-mount serve [options] --upstream <url>           serve an HTTP MCP server, both eras

Options of serve:
  --port <n>                   port to listen on (default 3000; 0 picks a free one)
  --host <address>             address to listen on (default 127.0.0.1)
  --path <path>                the MCP endpoint's path (default /mcp); readiness is at /healthz
  --upstream <url>             an HTTP upstream instead of a command
  -e, --env NAME[=value]       a variable for the command (repeatable; NAME alone passes ours):
                               it inherits only PATH, HOME, locale and the like
  --inherit-env                let the command inherit our whole environment
  --auth-issuer <url>          accept only JWTs from this issuer (OAuth resource server);
  --jwks-url <url>               needs the issuer's JWKS URL,
  --resource <url>               and, behind a proxy, the endpoint's public URL
  --redis <url>                share sessions and state with other processes (redis://...)
  --redis-cluster <host:port,...>  the same on a Redis Cluster
  --cors <origin,...>          browser origins allowed to call the endpoint
  --rate-limit <points>/<window>  a budget per caller, e.g. 60/1m or 10/1s
  --scope process|session|principal  one upstream per gateway process (default), per legacy
                               session, or per signed-in principal (needs --auth-issuer)
  --max-concurrency <n>        calls in flight per upstream connection (default 32)
  --trust-proxy                believe X-Forwarded-* from one proxy in front
  --allowed-hosts <name,...>   Host names answered (the public names behind a proxy)
  --grace-ms <n>               on SIGTERM or SIGINT, how long calls may finish (default 10000)
  MCP_SECRET (environment)     the requestState key: the same in every process behind one URL`;

/** The upstream `serve` forwards to: a program spoken to over stdio, or an HTTP endpoint. */
export type ServeUpstream =
  | {
      kind: "stdio";
      command: string;
      args: string[];
      /** Variables added to the child's environment. */
      env: Record<string, string>;
      /** Whether the child inherits all of ours, rather than only what a program needs to run. */
      inheritEnv: boolean;
    }
  | { kind: "http"; url: string };

/** A Redis to share the gateway's state with other processes. */
export type ServeRedis =
  | { kind: "standalone"; url: string }
  | { kind: "cluster"; nodes: { host: string; port: number }[] };

/** What `mcp-mount serve` was asked for, checked. */
export interface ServeOptions {
  port: number;
  host: string;
  path: string;
  upstream: ServeUpstream;
  auth?: { issuer: string; jwksUrl: string; resource?: string };
  redis?: ServeRedis;
  /** Browser origins allowed to call the endpoint, with CORS. */
  origins?: string[];
  allowedHosts?: string[];
  rateLimit?: { points: number; windowMs: number };
  scope: UpstreamScope;
  maxConcurrency?: number;
  trustProxy: boolean;
  graceMs: number;
}

const OPTIONS = {
  port: { type: "string", default: "3000" },
  host: { type: "string", default: "127.0.0.1" },
  path: { type: "string", default: "/mcp" },
  upstream: { type: "string" },
  env: { type: "string", short: "e", multiple: true },
  "inherit-env": { type: "boolean", default: false },
  "auth-issuer": { type: "string" },
  "jwks-url": { type: "string" },
  resource: { type: "string" },
  redis: { type: "string" },
  "redis-cluster": { type: "string" },
  cors: { type: "string" },
  "rate-limit": { type: "string" },
  scope: { type: "string", default: "process" },
  "max-concurrency": { type: "string" },
  "trust-proxy": { type: "boolean", default: false },
  "allowed-hosts": { type: "string" },
  "grace-ms": { type: "string", default: "10000" },
  help: { type: "boolean", short: "h", default: false },
} as const;

/**
 * Reads `serve`'s arguments (those after the word serve): its options up to `--`, then the
 * upstream command verbatim. `undefined` means help was asked for. Anything unknown, missing
 * or contradictory is a {@link UsageError}.
 */
export function parseServe(argv: string[]): ServeOptions | undefined {
  const { values, positionals } = parse(argv);
  if (values.help) return undefined;
  const auth = toAuth(values);
  const scope = toScope(values.scope);
  if (scope === "principal" && !auth) {
    throw new UsageError("--scope principal needs --auth-issuer: without it no caller is named");
  }
  const options: ServeOptions = {
    port: toInteger("--port", values.port, 65_535),
    host: values.host,
    path: toPath(values.path),
    upstream: toUpstream(values, positionals),
    scope,
    trustProxy: values["trust-proxy"],
    graceMs: toInteger("--grace-ms", values["grace-ms"]),
  };
  if (auth) options.auth = auth;
  const redis = toRedis(values.redis, values["redis-cluster"]);
  if (redis) options.redis = redis;
  if (values.cors !== undefined) options.origins = listOf(values.cors).map(toOrigin);
  if (values["allowed-hosts"] !== undefined) options.allowedHosts = listOf(values["allowed-hosts"]);
  if (values["rate-limit"] !== undefined) options.rateLimit = toRateLimit(values["rate-limit"]);
  if (values["max-concurrency"] !== undefined) {
    options.maxConcurrency = toInteger("--max-concurrency", values["max-concurrency"]);
    if (options.maxConcurrency < 1) throw new UsageError("--max-concurrency is at least 1");
  }
  return options;
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `${message.split("\n")[0]} (the upstream command's own options go after --, as in: mcp-mount serve -- node server.js --verbose)`,
    );
  }
}

type Values = ReturnType<typeof parse>["values"];

function toUpstream(values: Values, command: string[]): ServeUpstream {
  const [program, ...args] = command;
  const url = values.upstream;
  if (url !== undefined) {
    if (program !== undefined) {
      throw new UsageError(`--upstream or a command, not both (got ${program} as well)`);
    }
    if (values.env !== undefined || values["inherit-env"]) {
      throw new UsageError("--env and --inherit-env go with a command, not --upstream");
    }
    if (!/^https?:\/\//.test(url))
      throw new UsageError(`--upstream takes an http(s) URL, not "${url}"`);
    return { kind: "http", url: toUrl("--upstream", url).href };
  }
  if (program === undefined) {
    throw new UsageError("name the upstream: -- <command> [args...], or --upstream <url>");
  }
  const env = toEnv(values.env ?? []);
  return { kind: "stdio", command: program, args, env, inheritEnv: values["inherit-env"] };
}

/** `NAME=value`, or `NAME` for the value in our own environment. */
function toEnv(entries: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf("=");
    const name = at === -1 ? entry : entry.slice(0, at);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new UsageError(`--env takes NAME=value or NAME, not "${entry}"`);
    }
    const value = at === -1 ? process.env[name] : entry.slice(at + 1);
    if (value === undefined) throw new UsageError(`--env ${name}: ${name} is not set here`);
    env[name] = value;
  }
  return env;
}

function toAuth(values: Values): ServeOptions["auth"] {
  const issuer = values["auth-issuer"];
  const jwksUrl = values["jwks-url"];
  const resource = values.resource;
  if (issuer === undefined) {
    if (jwksUrl !== undefined || resource !== undefined) {
      throw new UsageError("--jwks-url and --resource go with --auth-issuer");
    }
    return undefined;
  }
  if (jwksUrl === undefined) {
    throw new UsageError("--auth-issuer needs --jwks-url: where the issuer's signing keys are");
  }
  toUrl("--auth-issuer", issuer);
  const auth = { issuer, jwksUrl: toUrl("--jwks-url", jwksUrl).href };
  if (resource === undefined) return auth;
  const url = toUrl("--resource", resource);
  if (url.search || url.hash)
    throw new UsageError("--resource takes a URL with no query or fragment");
  return { ...auth, resource };
}

function toScope(scope: string): UpstreamScope {
  if (scope === "process" || scope === "session" || scope === "principal") return scope;
  throw new UsageError(`--scope is process, session or principal, not "${scope}"`);
}

function toRedis(url: string | undefined, cluster: string | undefined): ServeRedis | undefined {
  if (url !== undefined && cluster !== undefined) {
    throw new UsageError("--redis or --redis-cluster, not both");
  }
  if (url !== undefined) {
    if (!/^rediss?:\/\//.test(url)) {
      throw new UsageError(`--redis takes a redis:// or rediss:// URL, not "${url}"`);
    }
    return { kind: "standalone", url };
  }
  if (cluster === undefined) return undefined;
  const nodes = listOf(cluster).map((entry) => {
    const at = entry.lastIndexOf(":");
    const port = Number(entry.slice(at + 1));
    if (at < 1 || !Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new UsageError(`--redis-cluster takes host:port,host:port..., not "${entry}"`);
    }
    return { host: entry.slice(0, at).replace(/^\[|\]$/g, ""), port };
  });
  if (nodes.length === 0) throw new UsageError("--redis-cluster names no node");
  return { kind: "cluster", nodes };
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `60/1m`, `10/30s`, `1000/1h`, or points alone for a minute's budget. */
function toRateLimit(text: string): { points: number; windowMs: number } {
  const match = /^(\d+)(?:\/(\d*)(ms|s|m|h))?$/.exec(text);
  if (!match) {
    throw new UsageError(
      `--rate-limit takes <points>/<window>, e.g. 60/1m or 10/1s, not "${text}"`,
    );
  }
  const points = Number(match[1]);
  const windowMs = match[3] ? Number(match[2] || 1) * UNITS[match[3]]! : 60_000;
  if (points < 1) throw new UsageError("--rate-limit allows at least 1 point per window");
  // The limiter counts in whole seconds.
  if (windowMs < 1_000 || windowMs % 1_000 !== 0) {
    throw new UsageError(`--rate-limit's window is a whole number of seconds, not ${windowMs} ms`);
  }
  return { points, windowMs };
}

function toInteger(option: string, text: string, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value > max) {
    throw new UsageError(
      `${option} takes a whole number${max < 1e9 ? ` up to ${max}` : ""}, not "${text}"`,
    );
  }
  return value;
}

function toPath(path: string): string {
  if (!path.startsWith("/") || /[?#\s]/.test(path)) {
    throw new UsageError(`--path takes a path such as /mcp, not "${path}"`);
  }
  return path;
}

function toUrl(option: string, text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new UsageError(`${option} takes a URL, not "${text}"`);
  }
}

/** An origin as browsers send it (`https://app.example.com`, no path), or `*`. */
function toOrigin(text: string): string {
  if (text === "*") return text;
  const url = /^https?:\/\//.test(text) ? toUrl("--cors", text) : undefined;
  if (!url || url.origin !== text.replace(/\/$/, "")) {
    throw new UsageError(`--cors takes origins such as https://app.example.com, not "${text}"`);
  }
  return url.origin;
}

function listOf(text: string): string[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}
