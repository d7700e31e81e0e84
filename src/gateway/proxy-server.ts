import type { McpClient } from "../client/client.js";
import type { JsonObject } from "../protocol/messages.js";
import { addExtension, type ExtensionHost, type ServerExtension } from "../server/extension.js";
import { McpServer, type McpServerOptions } from "../server/mcp-server.js";
import type { HandlerContext, Implementation } from "../server/types.js";
import { memoryStore } from "../store/memory.js";
import type { McpStore } from "../store/types.js";
import { forward, type Send } from "./forward.js";
import { type InputBridge, inputBridge } from "./input-bridge.js";
import { Mirror, mirroredCapabilities } from "./mirror.js";
import type { Forwarding } from "./mirror-entries.js";
import type { ProxyServerOptions, Upstream, UpstreamKey } from "./types.js";
import { clientUpstream } from "./upstream/client-upstream.js";

/** The extension id under which the gateway takes part in a handler (declared nowhere). */
const GATEWAY_EXTENSION = "mcp-mount/gateway";

/** An `McpServer` whose capabilities are those of the upstream it mirrors. */
class ProxiedServer extends McpServer {
  readonly #capabilities: () => JsonObject;

  constructor(options: McpServerOptions, capabilities: () => JsonObject) {
    super(options);
    this.#capabilities = capabilities;
  }

  override capabilities(): JsonObject {
    return mirroredCapabilities(this.#capabilities());
  }
}

/**
 * A server that serves an upstream MCP server's tools, prompts, resources, templates and
 * completions, kept in sync with its list changes; mount it with `createMcpHandler` (or
 * `serveStdio`) like any server. Each request is forwarded on a connection the upstream lends
 * for it, with its progress, log messages and cancellation; the upstream's requests for input
 * reach the client in its own era. Resolves once the upstream's lists are read.
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 * import { McpClient } from "mcp-mount/client";
 * import { proxyServer } from "mcp-mount/gateway";
 *
 * const upstream = await McpClient.connect("http://localhost:4000/mcp");
 * const server = await proxyServer(upstream, { inputTimeoutMs: 60_000 });
 * const mcp = createMcpHandler(server);
 * ```
 */
export async function proxyServer(
  upstream: Upstream | McpClient,
  options: ProxyServerOptions = {},
): Promise<McpServer> {
  const source = isUpstream(upstream) ? upstream : clientUpstream(upstream);
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const lease = await source.acquire({});
  try {
    const first = lease.client;
    let mirror: Mirror | undefined;
    const capabilities = () => (mirror?.client ?? first).server.capabilities;
    const server = new ProxiedServer(serverOptions(first, options), capabilities);
    const bridges = new BridgeChoice(options, onError);
    const forwarding: Forwarding = {
      request: (ctx, send, asks) => forwardRequest(source, ctx, send, asks ? bridges : undefined),
      completes: () => capabilities().completions !== undefined,
    };
    mirror = new Mirror(server, forwarding, onError);
    const connected = (client: McpClient, key: UpstreamKey) => {
      void askForLogs(client).catch(onError);
      // The process's own connection is the one mirrored, in every scope: its restart too.
      const own = source.scope === "process" || (!key.sessionId && !key.principal);
      if (own || !mirror.client) void mirror.attach(client).catch(onError);
    };
    await mirror.attach(first);
    void askForLogs(first).catch(onError);
    source.onConnect(connected);
    addExtension(server, (host) => bridges.mount(host));
    return server;
  } finally {
    lease.release();
  }
}

function isUpstream(value: Upstream | McpClient): value is Upstream {
  return typeof (value as Partial<Upstream>).acquire === "function";
}

function forwardRequest(
  upstream: Upstream,
  ctx: HandlerContext,
  send: Send,
  bridges: BridgeChoice | undefined,
): Promise<JsonObject> {
  return forward(upstream, ctx, send, bridges?.current());
}

/**
 * Every log message the upstream has, filtered later per request at its caller's level: one
 * connection serves callers of every level.
 */
async function askForLogs(client: McpClient): Promise<void> {
  if (client.server.capabilities.logging !== undefined) await client.setLogLevel("debug");
}

/** The server's name, version and instructions: those given, else the upstream's. */
function serverOptions(client: McpClient, options: ProxyServerOptions): McpServerOptions {
  const upstream = client.server.serverInfo;
  const info: Implementation = options.serverInfo ?? {
    name: typeof upstream?.name === "string" ? upstream.name : "mcp-mount-gateway",
    version: typeof upstream?.version === "string" ? upstream.version : "0.0.0",
  };
  if (!options.serverInfo && upstream) {
    for (const key of ["title", "description", "websiteUrl", "icons"] as const) {
      if (upstream[key] !== undefined) Object.assign(info, { [key]: upstream[key] });
    }
  }
  const instructions = options.instructions ?? client.server.instructions;
  return instructions === undefined ? info : { ...info, instructions };
}

/**
 * The input bridge requests use: the one of the latest handler mounting the server that is
 * still open (its store routes a modern client's answers across processes), else one over a
 * store of this process's own.
 */
class BridgeChoice {
  readonly #options: ProxyServerOptions;
  readonly #onError: (error: unknown) => void;
  readonly #mounted: InputBridge[] = [];
  #own: InputBridge | undefined;

  constructor(options: ProxyServerOptions, onError: (error: unknown) => void) {
    this.#options = options;
    this.#onError = onError;
  }

  current(): InputBridge {
    const mounted = this.#mounted.at(-1);
    if (mounted) return mounted;
    this.#own ??= this.#bridge(memoryStore(), this.#onError);
    return this.#own;
  }

  /** The gateway's part in one handler: a bridge over its store, closed with it. */
  mount(host: ExtensionHost): ServerExtension {
    const bridge = this.#bridge(host.store, host.onError);
    this.#mounted.push(bridge);
    return {
      id: GATEWAY_EXTENSION,
      close: async () => {
        this.#mounted.splice(this.#mounted.indexOf(bridge), 1);
        await bridge.close();
      },
    };
  }

  #bridge(store: McpStore, onError: (error: unknown) => void): InputBridge {
    return inputBridge({
      store,
      processId: crypto.randomUUID(),
      inputTimeoutMs: this.#options.inputTimeoutMs ?? 300_000,
      onError,
    });
  }
}
