import { ErrorCode, McpError } from "../protocol/errors.js";
import type { McpServer } from "../server/mcp-server.js";
import { memoryStore } from "../store/memory.js";
import { createEndpointServices } from "./create-endpoint-services.js";
import { createDiscovery } from "./discovery/serve.js";
import { createOriginGate } from "./guards/cors.js";
import { asForwarded, proxyHops } from "./guards/proxy.js";
import type { McpHandler, McpHandlerOptions } from "./handler-options.js";
import { createLegacyEra } from "./legacy/era.js";
import { errorResponse } from "./responses.js";
import { createRouter } from "./router.js";
import { drain, storeAnswers } from "./streams/drain.js";
import { targetOf } from "./target.js";
import type { McpHttpRequest, McpHttpResponse } from "./types.js";
import { fromWebRequest, toWebResponse } from "./web.js";

export type { CloseOptions, McpHandler, McpHandlerOptions, McpHealth } from "./handler-options.js";

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

function internalError(): McpHttpResponse {
  return errorResponse(500, new McpError(ErrorCode.InternalError, "Internal error"));
}

/**
 * Creates the MCP endpoint for `server`: one Web `fetch` handler serving both eras, with the
 * options' checks, auth, extensions and drain.
 *
 * @example
 * ```ts
 * import { createMcpHandler, McpServer } from "mcp-mount";
 *
 * const server = new McpServer({ name: "demo", version: "1.0.0" });
 * const mcp = createMcpHandler(server, { tasks: false });
 * export const POST = mcp.fetch;
 * ```
 */
export function createMcpHandler<App = unknown>(
  server: McpServer<App>,
  options: McpHandlerOptions<App> = {},
): McpHandler<App> {
  const store = options.store ?? memoryStore();
  const hops = proxyHops(options.trustProxy);
  const core = createEndpointServices(server, store, hops, options);
  const legacy =
    options.legacy === false
      ? undefined
      : createLegacyEra(core, store, options.legacy === true ? {} : (options.legacy ?? {}));
  const discovery = createDiscovery(server.info, {
    serverCard: options.serverCard,
    auth: options.auth,
    legacy: options.legacy !== false,
    forwarded: hops > 0,
  });
  let closing = false;
  let closed: Promise<void> | undefined;
  const route = createRouter({
    core,
    legacy,
    auth: options.auth,
    hops,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
    allowedHosts: options.allowedHosts,
    discovery,
    draining: () => closing,
  });
  const isPublic =
    discovery && ((req: McpHttpRequest) => discovery.match(targetOf(req)) !== undefined);
  // An allowedOrigins function threw: the origin is not known to be allowed, so no CORS.
  const gateFailed = (error: unknown) => {
    core.reportError(error);
    return internalError();
  };
  const gate = createOriginGate(
    server.tools,
    options.allowedOrigins,
    options.cors,
    isPublic,
    gateFailed,
  );

  // The origin gate is outermost, so every answer (refusals, 401, 413, 429, 503, 500) gets CORS.
  // Not async: neither the gate nor the router rejects, so there is no promise of its own here.
  function handle(received: McpHttpRequest): Promise<McpHttpResponse> {
    try {
      return gate(hops > 0 ? asForwarded(received, hops) : received, route);
    } catch (error) {
      return Promise.resolve(gateFailed(error));
    }
  }

  return {
    server,
    servesServerCard: discovery !== undefined,
    fetch: async (request, fetchOptions) =>
      toWebResponse(await handle(fromWebRequest(request, fetchOptions))),
    handle,
    ready: core.hub.ready,
    stats: () => ({ streams: core.slots.size, sessionsHeld: legacy?.sessionsHeld ?? 0 }),
    async health() {
      const reachable = await storeAnswers(store);
      return { ready: !closing && reachable === "up", draining: closing, store: reachable };
    },
    close(closeOptions = {}) {
      closing = true;
      closed ??= drain({ core, legacy, store }, closeOptions.graceMs ?? 0);
      return closed;
    },
  };
}
