import { ErrorCode, McpError } from "../../protocol/errors.js";
import type { RequestId } from "../../protocol/messages.js";
import type { McpStore } from "../../store/types.js";
import type { EndpointServices } from "../endpoint-services.js";
import type { LegacyEra } from "../legacy/types.js";
import { errorResponse } from "../responses.js";
import type { McpHttpResponse } from "../types.js";

/** 503 for a request that arrives while the endpoint drains: a load balancer retries it elsewhere. */
export function shuttingDown(id?: RequestId): McpHttpResponse {
  return errorResponse(503, new McpError(ErrorCode.InternalError, "Server is shutting down"), {
    id,
    headers: {
      "retry-after": "1",
      connection: "close",
    },
  });
}

/** Whether the store answers a ping now; a store without `ping` counts as reachable. */
export async function storeAnswers(store: McpStore): Promise<"up" | "down"> {
  if (!store.ping) return "up";
  try {
    await store.ping();
    return "up";
  } catch {
    return "down";
  }
}

/** What a drain winds down, besides the requests in flight the core tracks. */
export interface DrainParts {
  core: EndpointServices;
  legacy: Pick<LegacyEra, "handOver" | "close"> | undefined;
  store: McpStore;
}

/**
 * Winds the endpoint down once new requests are refused: long-lived streams are handed over
 * first, requests in flight and extensions' work get `graceMs` between them, then everything
 * this process holds is closed and the store released.
 */
export async function drain({ core, legacy, store }: DrainParts, graceMs: number): Promise<void> {
  const started = Date.now();
  const info = core.server.info;
  const extensions = core.dispatchServices.extensions ?? [];
  // Long-lived streams first, so their clients reconnect elsewhere while the rest finishes.
  await legacy?.handOver();
  core.hub.endStreams(info);
  for (const extension of extensions) extension.endStreams?.();
  await core.inflight.settle(graceMs);
  const left = Math.max(0, graceMs - (Date.now() - started));
  await Promise.all(extensions.map((extension) => extension.whenIdle?.(left)));
  await legacy?.close();
  for (const extension of extensions) await extension.close?.();
  // Only now: calls that ran during the grace may still have announced changes.
  await core.hub.close(info);
  await store.close();
}
