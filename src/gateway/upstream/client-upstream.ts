import type { McpClient } from "../../client/client.js";
import type { Upstream, UpstreamKey } from "../types.js";
import { DEFAULT_CLOSE_GRACE_MS, Leases } from "./leases.js";
import { retryableError } from "./retryable.js";

/**
 * A fixed upstream over a client already connected, as `proxyServer(client)` takes it: every
 * request uses that client, nothing bounds concurrency and nothing restarts it. `close()`
 * refuses new requests, waits for those in flight (up to `graceMs`) and closes the client.
 *
 * @example
 * ```ts
 * import { McpClient } from "mcp-mount/client";
 * import { clientUpstream } from "mcp-mount/gateway";
 *
 * const client = await McpClient.connect("http://localhost:4000/mcp");
 * const upstream = clientUpstream(client);
 * const lease = await upstream.acquire({});
 * try {
 *   console.log(await lease.client.tools());
 * } finally {
 *   lease.release();
 * }
 * ```
 */
export function clientUpstream(client: McpClient): Upstream {
  const leases = new Leases();
  let closing: Promise<void> | undefined;
  return {
    scope: "process",
    async acquire(_key: UpstreamKey, signal?: AbortSignal) {
      if (closing) throw retryableError("The upstream is stopping");
      signal?.throwIfAborted();
      return leases.lend(client);
    },
    onConnect(listener) {
      // The one connection is open already: its listener hears of it at once.
      listener(client, {});
      return () => {};
    },
    close(graceMs = DEFAULT_CLOSE_GRACE_MS) {
      closing ??= leases.drained(graceMs).then(() => client.close());
      return closing;
    },
  };
}
