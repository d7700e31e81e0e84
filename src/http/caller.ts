import type { JsonObject } from "../protocol/messages.js";
import type { AuthInfo } from "../server/types.js";
import type { ServerOperation } from "../telemetry/server-operation.js";

/** Who sent a request: the verified principal, and the app's context for it. */
export interface Caller {
  auth?: AuthInfo;
  app?: unknown;
  /** The message's span and duration (telemetry), when on. */
  operation?: ServerOperation;
  /** Charges more to the caller's rate limit (`ctx.charge`), when the endpoint has one. */
  charge?: (points: number) => Promise<void>;
}

/** The name a request acts on, for hooks and traces. */
export function nameOf(params: JsonObject): string | undefined {
  const name = params.name ?? params.uri;
  return typeof name === "string" ? name : undefined;
}
