import { McpClient } from "../../client/client.js";
import type { McpClientOptions } from "../../client/options.js";
import type { Upstream } from "../types.js";
import { upstreamClientOptions } from "./client-options.js";
import type { Connect } from "./connection.js";
import { InProcessWire, type SdkServer } from "./in-process-wire.js";
import { type SupervisionOptions, supervised } from "./supervised.js";

/** Options of {@link sdkUpstream}. */
export interface SdkUpstreamOptions extends SupervisionOptions {
  /**
   * How the gateway's client speaks to the server (era, `onInput`, `timeoutMs`...).
   * @default no `timeoutMs`, and an `onInput` declaring elicitation, sampling and roots, which
   * each forwarded call answers with its own
   */
  clientOptions?: McpClientOptions;
  /** Names the upstream in errors. @default "sdk-server" */
  name?: string;
}

function connectSdk(server: () => SdkServer, name: string, options: SdkUpstreamOptions): Connect {
  return async (signal) => {
    const wire = new InProcessWire(name);
    await server().connect(wire.transport);
    const given = options.clientOptions?.signal;
    const client = await McpClient.connect(wire, {
      ...upstreamClientOptions(options.clientOptions),
      signal: given ? AbortSignal.any([given, signal]) : signal,
    });
    return { client, ended: wire.serverClosed };
  };
}

/**
 * An official SDK (v1) `Server` or `McpServer` object in this process as the upstream, reached
 * through an in-process transport: no child process, no socket. One server object serves one
 * connection, so the scope is "process"; give a factory `() => server` for one server per
 * legacy session or principal. Should the server close its transport, it is connected again
 * with backoff.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
 * import { createMcpHandler } from "mcp-mount";
 * import { proxyServer, sdkUpstream } from "mcp-mount/gateway";
 *
 * const sdk = new McpServer({ name: "legacy-app", version: "1.0.0" });
 * sdk.registerTool("ping", {}, async () => ({ content: [{ type: "text", text: "pong" }] }));
 * const mcp = createMcpHandler(await proxyServer(sdkUpstream(sdk)));
 * ```
 */
export function sdkUpstream(
  server: SdkServer | (() => SdkServer),
  options: SdkUpstreamOptions = {},
): Upstream {
  const factory = typeof server === "function" ? server : undefined;
  if (!factory && (options.scope ?? "process") !== "process") {
    throw new TypeError(`sdkUpstream needs a factory () => server for scope "${options.scope}"`);
  }
  const name = JSON.stringify(options.name ?? "sdk-server");
  const connect = connectSdk(factory ?? (() => server as SdkServer), name, options);
  return supervised(name, () => connect, options);
}
