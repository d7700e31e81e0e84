import type { JsonObject } from "../../../protocol/messages.js";
import type { TaskRecord } from "../../../store/types.js";
import { principalKey } from "../../access.js";
import type { TransportContext } from "../../context.js";
import type { RegisteredTool } from "../../mcp-server.js";

/** What a new task takes from the extension's options and its process. */
export interface TaskSettings {
  ttlMs: number;
  pollIntervalMs: number;
  leaseMs: number;
  /** The process that runs it first. */
  processId: string;
}

/**
 * A new task's record: working, leased to this process, linked to the request's span (with
 * telemetry), and holding what a re-run needs when the tool may run twice.
 */
export function createTaskRecord(
  tool: RegisteredTool,
  args: JsonObject,
  env: TransportContext,
  settings: TaskSettings,
): TaskRecord {
  const now = Date.now();
  const record: TaskRecord = {
    id: crypto.randomUUID(),
    principal: principalKey(env.auth),
    // Anonymous callers share one (empty) principal, so each counts against its own cap.
    ...(!env.auth && env.client !== undefined && { quota: env.client }),
    status: "working",
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: settings.ttlMs,
    pollIntervalMs: settings.pollIntervalMs,
    inputRequests: {},
    inputResponses: {},
    owner: settings.processId,
    leaseUntil: now + settings.leaseMs,
    version: 1,
  };
  const traceparent = env.operation?.traceparent();
  if (traceparent !== undefined) record.traceparent = traceparent;
  // Only work that may run twice is kept for a re-run after its process dies.
  if (tool.options.annotations?.idempotentHint === true) {
    const request: JsonObject = {
      name: tool.options.name,
      arguments: args,
      capabilities: env.clientCapabilities,
    };
    if (env.clientInfo) request.clientInfo = env.clientInfo as unknown as JsonObject;
    if (env.auth) {
      const { token: _never, ...auth } = env.auth;
      request.auth = auth as JsonObject;
    }
    record.request = request;
  }
  return record;
}
