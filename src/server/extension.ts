import type { McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import type { McpStore } from "../store/types.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import type { TransportContext } from "./context.js";
import type { EraPolicy } from "./era-policy.js";
import type { ListenFilter } from "./listen-hub.js";
import type { ChangeEvent, McpServer, RegisteredTool, Registration } from "./mcp-server.js";
import type { HandlerContext } from "./types.js";

/** One request an extension serves, as the dispatcher hands it over. */
export interface ExtensionRequest {
  server: McpServer;
  ctx: HandlerContext;
  params: JsonObject;
  env: TransportContext;
  /** What the request's era does differently (`era.extensions`: whether extensions apply). */
  era: EraPolicy;
}

/** A `tools/call` about to run, which an extension may take over. */
export interface ToolCall extends ExtensionRequest {
  tool: RegisteredTool;
  /** The call's arguments, checked to be an object (not yet against the tool's schema). */
  args: JsonObject;
}

/**
 * A protocol extension of the server (tasks, skills), the one way the core
 * reaches one: what it declares, the methods it serves, the tool calls it takes over, and its
 * part in a drain. The dispatcher and the HTTP handler know extensions only through this.
 */
export interface ServerExtension {
  /** The extension's identifier, as negotiated in `capabilities.extensions`. */
  readonly id: string;
  /** What `server/discover` declares under `capabilities.extensions[id]`; absent while it is off. */
  readonly declaration?: JsonObject | undefined;
  /** Whether it serves legacy sessions too: declared in `initialize` results as well. */
  readonly legacy?: boolean;
  /** JSON-RPC methods it serves, by name. */
  readonly methods?: Readonly<Record<string, (request: ExtensionRequest) => Promise<JsonObject>>>;
  /** Takes over a `tools/call`: the promise of its result, or undefined to let the tool run. */
  callTool?(call: ToolCall): Promise<JsonObject> | undefined;
  /** Why a `subscriptions/listen` filter may not be served (parts of it are the extension's). */
  refuseListen?(filter: ListenFilter, clientCapabilities: JsonObject): McpError | undefined;
  /**
   * Listen filter flags it serves now (`eventsListChanged`): a flag no extension serves is left
   * out of the filter, so the acknowledgement does not echo it.
   */
  readonly listenFlags?: readonly string[];
  /**
   * Its methods whose requests are streams, open until cancelled (`events/stream`): a client
   * going away cancels them in either era, and {@link endStreams} ends them in a drain.
   */
  readonly streams?: readonly string[];
  /** Ends its streams gracefully, with their results (a drain's first step, as listen's). */
  endStreams?(): void;
  /** Resolves once its work in this process is done, or after `ms` (a drain's grace). */
  whenIdle?(ms: number): Promise<void>;
  /** Stops its work in this process, when the handler closes. */
  close?(): Promise<void>;
}

/** What a handler lends its extensions. */
export interface ExtensionHost {
  server: McpServer;
  store: McpStore;
  /** Announces a change to listen streams of every process. */
  publish(event: ChangeEvent): void;
  /** Reports errors no client sees in full. */
  onError(error: unknown): void;
  /** Spans and metrics (OpenTelemetry) for the extension's own work; none when off. */
  telemetry?: Telemetry;
}

/** Builds an extension for one handler that mounts the server, from what that handler lends. */
export type ExtensionFactory = (host: ExtensionHost) => ServerExtension;

const factories = new WeakMap<McpServer, Set<ExtensionFactory>>();

/**
 * Adds an extension of the app's own to every handler that mounts `server` from now on
 * (`createMcpHandler`, `serveStdio`): each calls `factory` with its own store and hooks, then
 * serves the extension's methods, lets it take over tool calls, and drains and closes it with
 * the rest. Removing the registration leaves handlers already built alone.
 *
 * @example
 * ```ts
 * addExtension(server, ({ store }) => ({
 *   id: "example.com/audit",
 *   callTool: (call) => {
 *     void store.nonces.claim(`audit:${String(call.ctx.requestId)}`, 60_000);
 *     return undefined;
 *   },
 * }));
 * ```
 */
export function addExtension(server: McpServer, factory: ExtensionFactory): Registration {
  const used = factories.get(server) ?? new Set<ExtensionFactory>();
  factories.set(server, used);
  used.add(factory);
  return { remove: () => used.delete(factory) };
}

/** The extensions added with {@link addExtension}, built for the handler that lends `host`. */
export function addedExtensions(host: ExtensionHost): ServerExtension[] {
  return [...(factories.get(host.server) ?? [])].map((factory) => factory(host));
}

/** The extension that serves `method`, if any. */
export function extensionFor(
  extensions: readonly ServerExtension[],
  method: string,
): ServerExtension | undefined {
  return extensions.find((extension) => extension.methods?.[method] !== undefined);
}

/** What the extensions that are on declare, by id; undefined when none is. */
export function declarationsOf(
  extensions: readonly ServerExtension[],
  era: "modern" | "legacy",
): JsonObject | undefined {
  const declared: JsonObject = {};
  for (const extension of extensions) {
    const { declaration } = extension;
    if (declaration && (era === "modern" || extension.legacy)) declared[extension.id] = declaration;
  }
  return Object.keys(declared).length > 0 ? declared : undefined;
}

/** The listen filter flags the extensions serve now (see {@link ServerExtension.listenFlags}). */
export function servedListenFlags(extensions: readonly ServerExtension[]): string[] {
  return extensions.flatMap((extension) => extension.listenFlags ?? []);
}

/** True when an extension serves `method` as a stream (see {@link ServerExtension.streams}). */
export function isStreamMethod(
  extensions: readonly ServerExtension[] | undefined,
  method: string,
): boolean {
  // A loop, not some(): no closure on every request's way through.
  if (extensions === undefined) return false;
  for (const extension of extensions) if (extension.streams?.includes(method)) return true;
  return false;
}
