import type { McpError } from "../../../../protocol/errors.js";
import {
  controlWebhookId,
  type DeliveryErrorCategory,
  eventsError,
} from "../../../../protocol/events.js";
import type { WebhookRecord } from "../../../../store/types.js";
import type { WebhookRuntime } from "./runtime.js";
import { postWebhook } from "./send.js";
import { signedHeaders } from "./sign.js";

/**
 * Tells a deleted subscription's callback that it ended (SEP-3415, subscription termination): a
 * signed `terminated` envelope carrying `error`. Best effort: it is gone whether or not the POST
 * arrives.
 */
export async function terminate(
  runtime: WebhookRuntime,
  record: WebhookRecord,
  error: McpError,
): Promise<void> {
  const body = JSON.stringify({ type: "terminated", error: error.toJSON() });
  const headers = await signedHeaders(
    controlWebhookId("terminated"),
    body,
    record.secrets,
    record.id,
  );
  await postWebhook(new URL(record.url), body, headers, await runtime.send());
}

/**
 * Drops a suspended no-expiry subscription whose deliveries have failed for `maxTtlMs`, the
 * longest a finite one lives unrefreshed (SEP-3415, subscription TTL: no expiry has no such
 * backstop, so the server may drop it after sustained failure, and should say so with a
 * `terminated` envelope, here `CallbackEndpointError` with its last failure). True when it was
 * dropped, by this process or another.
 */
export async function dropIfAbandoned(
  runtime: WebhookRuntime,
  record: WebhookRecord,
  now: number,
): Promise<boolean> {
  if (record.active || record.expiresAt !== null) return false;
  if (now - (record.failedSince ?? now) < runtime.options.maxTtlMs) return false;
  if (!(await runtime.webhooks.delete(record.name, record.id))) return true;
  // lastError is always one of the categories (outcome.ts); none recorded reads as unreachable.
  const reason = (record.lastError ?? "connection_refused") as DeliveryErrorCategory;
  await terminate(runtime, record, eventsError("CallbackEndpointError", { reason }));
  return true;
}
