import { invalidParams } from "../../../../protocol/errors.js";
import { eventsError } from "../../../../protocol/events.js";
import { isObject, type JsonObject } from "../../../../protocol/messages.js";
import type { WebhookRecord } from "../../../../store/types.js";
import { isIdentified, principalKey } from "../../../access.js";
import type { ExtensionRequest } from "../../../extension.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { startFrom } from "../reader.js";
import type { EventContext, RegisteredEvent } from "../types.js";
import { catchUp } from "./fan-out.js";
import { principalHoldings } from "./holdings.js";
import {
  deliveryStatus,
  grantedExpiry,
  REPLAY_HOLD_MS,
  rotatedSecrets,
  subscriptionId,
  watermark,
} from "./record.js";
import { updateRecord, type WebhookRuntime } from "./runtime.js";
import { isCallbackUrl } from "./send.js";
import { isWebhookSecret } from "./sign.js";
import { verificationSlot, verifyEndpoint } from "./verify.js";

/** A subscribe request, checked. */
interface Asked {
  principal: string;
  event: RegisteredEvent;
  args: JsonObject;
  url: URL;
  secret: string;
  cursor: string | null;
  maxAgeMs: number | undefined;
  /** The grant: when it lapses, null for never. */
  expiresAt: number | null;
}

/**
 * The caller's principal: webhook subscriptions need an authenticated one (SEP-3415,
 * subscription identity: `Forbidden` without).
 */
export function principalOf(request: ExtensionRequest): string {
  const { auth } = request.env;
  if (!auth || !isIdentified(auth))
    throw eventsError("Forbidden", {
      reason: "Webhook subscriptions need an authenticated principal",
    });
  return principalKey(auth);
}

/** The callback URL of `delivery`, parsed; InvalidParams when it is not one we deliver to. */
export async function callbackUrl(runtime: WebhookRuntime, delivery: unknown): Promise<URL> {
  const raw = isObject(delivery) ? delivery.url : undefined;
  if (typeof raw !== "string" || !URL.canParse(raw))
    throw invalidParams("delivery.url must be a URL");
  const url = new URL(raw);
  const { policy } = await runtime.send();
  if (!isCallbackUrl(url, policy))
    throw invalidParams("delivery.url must be an https URL without credentials or fragment");
  return url;
}

/**
 * `events/subscribe` (SEP-3415, webhook-based delivery): creates the subscription keyed by
 * (principal, url, name, arguments) once its endpoint is verified, or refreshes it: a new TTL,
 * the new secret (the old one still signing for a grace window), delivery resumed.
 */
export async function subscribe(
  runtime: WebhookRuntime,
  request: ExtensionRequest,
): Promise<JsonObject> {
  const asked = await check(runtime, request);
  const id = subscriptionId(
    asked.principal,
    asked.url.href,
    asked.event.descriptor.name,
    asked.args,
  );
  for (let attempt = 0; attempt < 4; attempt++) {
    const existing = await runtime.webhooks.get(asked.event.descriptor.name, id);
    const result = existing
      ? await refresh(runtime, existing, asked)
      : await create(runtime, id, asked);
    // Undefined: another process wrote it first; look again.
    // The era adds `resultType` (2026-07-28); a legacy session's result has none.
    if (result) return result;
  }
  throw new Error(`Subscription ${id} kept changing under this subscribe`);
}

/** The request's checks, in the text's order of errors. */
async function check(runtime: WebhookRuntime, request: ExtensionRequest): Promise<Asked> {
  const principal = principalOf(request);
  const { params } = request;
  if (typeof params.name !== "string") throw invalidParams("name must be a string");
  const event = runtime.host.registry.events.get(params.name);
  if (!event) throw eventsError("NotFound", { kind: "event" }, `Unknown event: ${params.name}`);
  if (!runtime.host.offers(event, "webhook"))
    throw eventsError("Unsupported", { feature: "deliveryMode", value: "webhook" });
  const delivery = params.delivery;
  if (!isObject(delivery) || (delivery.mode !== undefined && delivery.mode !== "webhook"))
    throw invalidParams('delivery must be { mode: "webhook", url, secret }');
  const url = await callbackUrl(runtime, delivery);
  if (!isWebhookSecret(delivery.secret))
    throw invalidParams("delivery.secret must be whsec_ and the base64 of 24 to 64 bytes");
  const args = params.arguments ?? {};
  if (!isObject(args)) throw invalidParams("arguments must be an object");
  const checked = await event.input?.validate(args);
  if (checked && !checked.ok) throw invalidParams(`Invalid arguments: ${checked.message}`);
  const { maxAgeMs, ttlMs } = params;
  if (maxAgeMs !== undefined && !(Number.isInteger(maxAgeMs) && (maxAgeMs as number) >= 0))
    throw invalidParams("maxAgeMs must be a non-negative integer");
  if (ttlMs !== undefined && ttlMs !== null && !(Number.isInteger(ttlMs) && (ttlMs as number) > 0))
    throw invalidParams("ttlMs must be a positive integer or null");
  const ctx: EventContext = { principal, delivery: "webhook" };
  if (request.env.auth) ctx.auth = request.env.auth;
  if (!((await event.options.authorize?.(ctx, args)) ?? true))
    throw eventsError("Forbidden", { reason: "Not permitted for these arguments" });
  return {
    principal,
    event,
    args,
    url,
    secret: delivery.secret,
    cursor: decodeCursor(params.name, params.cursor),
    maxAgeMs: maxAgeMs as number | undefined,
    expiresAt: grantedExpiry(ttlMs, runtime.options, Date.now()),
  };
}

/**
 * Refreshes a live subscription: the supplied cursor is at or behind what is in flight, so it
 * changes nothing (SEP-3415); delivery resumes if it was suspended, its failure clock restarted.
 */
async function refresh(
  runtime: WebhookRuntime,
  existing: WebhookRecord,
  asked: Asked,
): Promise<JsonObject | undefined> {
  const now = Date.now();
  const next: WebhookRecord = {
    ...existing,
    secrets: rotatedSecrets(existing, asked.secret, runtime.options.rotationGraceMs, now),
    expiresAt: asked.expiresAt,
    active: true,
    version: existing.version + 1,
  };
  if (existing.failedSince !== undefined) next.failedSince = now;
  if (!existing.active) next.replayUntil = now + REPLAY_HOLD_MS;
  if (!(await runtime.webhooks.put(next, existing.version))) return undefined;
  // Reactivated: nothing was queued for it while suspended; replay from its frozen watermark.
  if (!existing.active) {
    await replay(runtime, asked.event, next);
    runtime.wake();
  }
  const head = await runtime.feeds.head(existing.name);
  return {
    id: existing.id,
    refreshBefore: iso(asked.expiresAt),
    cursor: encodeCursor(existing.name, await watermark(runtime.deliveries, existing, head)),
    truncated: false,
    deliveryStatus: deliveryStatus(existing),
  };
}

/**
 * Creates a subscription: within the principal's cap, after the endpoint's verification (unless
 * this principal verified this URL already), delivering after the supplied cursor (replayed from
 * the feed) or from now.
 */
async function create(
  runtime: WebhookRuntime,
  id: string,
  asked: Asked,
): Promise<JsonObject | undefined> {
  const name = asked.event.descriptor.name;
  const holdings = await principalHoldings(runtime, asked.principal, asked.url.href);
  const max = runtime.options.maxPerPrincipal;
  if (holdings.count >= max)
    throw eventsError("ResourceExhausted", { limit: "subscriptions", max });
  const secrets = [{ secret: asked.secret }];
  if (!holdings.verified && !runtime.verified.has(asked.principal, asked.url.href)) {
    const { nonces } = runtime.host.store;
    const perMinute = runtime.options.verificationsPerMinute;
    if (!(await verificationSlot(nonces, asked.url.hostname, perMinute)))
      throw eventsError("ResourceExhausted", { limit: "verifications", max: perMinute });
    const target = { principal: asked.principal, url: asked.url, subscriptionId: id, secrets };
    await verifyEndpoint(target, await runtime.send());
    runtime.verified.add(asked.principal, asked.url.href);
  }
  const start =
    asked.cursor === null
      ? { position: await runtime.feeds.head(name), truncated: false }
      : await startFrom(runtime.feeds, name, asked.cursor, asked.maxAgeMs);
  const record: WebhookRecord = {
    id,
    name,
    principal: asked.principal,
    url: asked.url.href,
    arguments: asked.args,
    secrets,
    createdAt: Date.now(),
    expiresAt: asked.expiresAt,
    active: true,
    from: start.position,
    replayUntil: Date.now() + REPLAY_HOLD_MS,
    version: 1,
  };
  if (!(await runtime.webhooks.put(record, 0))) return undefined;
  // What was appended after the start, before this record was there for the fan-out to see.
  await replay(runtime, asked.event, record);
  return {
    id,
    refreshBefore: iso(asked.expiresAt),
    cursor: encodeCursor(name, start.position),
    truncated: start.truncated,
  };
}

/**
 * Queues the feed after `record.from` (see `catchUp`), then lifts the record's `replayUntil`:
 * until the replay is queued, no owed job tells the watermark about it, so the cursors of
 * occurrences emitted meanwhile, delivered first, stay at `from`.
 */
async function replay(
  runtime: WebhookRuntime,
  event: RegisteredEvent,
  record: WebhookRecord,
): Promise<void> {
  await catchUp(runtime, event, record);
  await updateRecord(runtime.webhooks, record.name, record.id, (current) => {
    if (current.replayUntil === undefined) return undefined;
    delete current.replayUntil;
    return current;
  });
}

/** `events/unsubscribe`: deletes the caller's subscription of that key; NotFound without one. */
export async function unsubscribe(
  runtime: WebhookRuntime,
  request: ExtensionRequest,
): Promise<JsonObject> {
  const principal = principalOf(request);
  const { params } = request;
  if (typeof params.name !== "string") throw invalidParams("name must be a string");
  const args = params.arguments ?? {};
  if (!isObject(args)) throw invalidParams("arguments must be an object");
  const url = await callbackUrl(runtime, params.delivery);
  const id = subscriptionId(principal, url.href, params.name, args);
  if (!(await runtime.webhooks.delete(params.name, id)))
    throw eventsError("NotFound", { kind: "subscription" }, "No such subscription");
  return {};
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
