import { EventsMethod, eventsError } from "../../../../protocol/events.js";
import type { WebhookHost, WebhookModule } from "../webhook-module.js";
import { createAddressPolicy } from "./address.js";
import { enqueueDeliveries } from "./fan-out.js";
import { resolveWebhookOptions, type WebhookOptions } from "./options.js";
import type { WebhookRuntime } from "./runtime.js";
import type { SendOptions } from "./send.js";
import { subscribe, unsubscribe } from "./subscribe.js";
import { terminate } from "./terminate.js";
import { VerifiedEndpoints } from "./verify.js";
import { DeliveryWorker } from "./worker.js";

export type { ResolvedAddress, WebhookOptions } from "./options.js";

/** How long this process remembers an endpoint it verified, without a stored subscription. */
const VERIFIED_TTL_MS = 3_600_000;

/**
 * The webhook module of one handler (SEP-3415, webhook-based delivery; Node only, loaded by the
 * events extension when `events.webhooks` is set): `events/subscribe` and `events/unsubscribe`,
 * the fan-out `emit` calls after each append, and the delivery worker of this process, started
 * now and stopped by `close`. Throws when the store keeps no webhooks or deliveries, or on a bad
 * option.
 */
export function createWebhooks(host: WebhookHost, options: WebhookOptions): WebhookModule {
  const { feeds, webhooks, deliveries } = host.store;
  if (!feeds || !webhooks || !deliveries)
    throw new Error("events.webhooks needs a store that keeps feeds, webhooks and deliveries");
  const resolved = resolveWebhookOptions(options);
  let sending: Promise<SendOptions> | undefined;
  const send = () => {
    sending ??= createAddressPolicy(resolved.allow).then((policy) => ({
      policy,
      connectTimeoutMs: resolved.connectTimeoutMs,
      timeoutMs: resolved.timeoutMs,
      lookup: resolved.lookup,
    }));
    return sending;
  };
  let worker: DeliveryWorker | undefined;
  const runtime: WebhookRuntime = {
    host,
    options: resolved,
    feeds,
    webhooks,
    deliveries,
    send,
    verified: new VerifiedEndpoints(VERIFIED_TTL_MS),
    wake: () => worker?.wake(),
  };
  worker = new DeliveryWorker(runtime);
  const stopListening = host.registry.onChange(({ name, removed }) => {
    if (removed) terminateAll(runtime, name).catch(host.onError);
  });
  return {
    methods: {
      [EventsMethod.subscribe]: (request) => subscribe(runtime, request),
      [EventsMethod.unsubscribe]: (request) => unsubscribe(runtime, request),
    },
    fanOut: (ctx, entry) => enqueueDeliveries(runtime, ctx, entry),
    whenIdle: (ms) => worker.whenIdle(ms),
    async close() {
      stopListening();
      await worker.close();
    },
  };
}

/**
 * Ends every subscription to a removed event type (SEP-3415, event type removal): deleted, then
 * told so with a signed `terminated` envelope (NotFound, kind "event"), once, by whichever
 * process deleted it. Best effort: the subscription is gone whether or not the POST arrives.
 */
async function terminateAll(runtime: WebhookRuntime, name: string): Promise<void> {
  for (const record of await runtime.webhooks.ofEvent(name)) {
    if (!(await runtime.webhooks.delete(name, record.id))) continue;
    await terminate(runtime, record, eventsError("NotFound", { kind: "event" }));
  }
}
