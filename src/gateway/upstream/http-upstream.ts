import { McpClient } from "../../client/client.js";
import type { McpClientOptions } from "../../client/options.js";
import type { Upstream } from "../types.js";
import { upstreamClientOptions } from "./client-options.js";
import type { Connect } from "./connection.js";
import { messageOf, retryableError } from "./retryable.js";
import { type SupervisionOptions, supervised } from "./supervised.js";

/** Options of {@link httpUpstream}. */
export interface HttpUpstreamOptions extends SupervisionOptions {
  /**
   * How the gateway's client speaks to the server (era, headers, `auth`, `timeoutMs`...).
   * @default no `timeoutMs`, and an `onInput` declaring elicitation, sampling and roots, which
   * each forwarded call answers with its own
   */
  clientOptions?: McpClientOptions;
}

/**
 * A fetch that turns a failure to reach the server into a retryable error, and says so once
 * through `unreachable`: the connection is opened again, which a legacy server that restarted
 * (its sessions gone) needs.
 */
function reporting(
  name: string,
  base: typeof fetch,
  unreachable: (error: Error) => void,
): typeof fetch {
  return async (input, init) => {
    try {
      return await base(input, init);
    } catch (error) {
      if (init?.signal?.aborted) throw error;
      const failure = retryableError(
        `The upstream ${name} is unreachable: ${messageOf(error)}`,
        error,
      );
      unreachable(failure);
      throw failure;
    }
  };
}

function connectHttp(url: URL, name: string, options: HttpUpstreamOptions): Connect {
  return async (signal) => {
    let unreachable!: (error: Error) => void;
    const ended = new Promise<Error>((resolve) => {
      unreachable = resolve;
    });
    const base = options.clientOptions?.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const given = options.clientOptions?.signal;
    const client = await McpClient.connect(url, {
      ...upstreamClientOptions(options.clientOptions),
      fetch: reporting(name, base, unreachable),
      signal: given ? AbortSignal.any([given, signal]) : signal,
    });
    return { client, ended };
  };
}

/**
 * An upstream MCP server at a Streamable HTTP (or HTTP+SSE) URL, in either era: one client for
 * the process, or one per legacy session or principal with `scope`. A server that cannot be
 * reached fails requests with a retryable error, and the client is connected again with
 * backoff. Headers are the same for every scope (`clientOptions.headers`).
 *
 * @example
 * ```ts
 * import { createMcpHandler } from "mcp-mount";
 * import { httpUpstream, proxyServer } from "mcp-mount/gateway";
 *
 * const upstream = httpUpstream("http://127.0.0.1:4000/mcp", {
 *   clientOptions: { headers: { Authorization: "Bearer upstream-token" } },
 * });
 * const mcp = createMcpHandler(await proxyServer(upstream));
 * ```
 */
export function httpUpstream(url: string | URL, options: HttpUpstreamOptions = {}): Upstream {
  const target = new URL(url);
  // Errors name the endpoint without its credentials or query.
  const name = JSON.stringify(`${target.origin}${target.pathname}`);
  const connect = connectHttp(target, name, options);
  return supervised(name, () => connect, options);
}
