import type { WebhookRuntime } from "./runtime.js";

/** What a principal holds: how many subscriptions, and whether one of them delivers to `url`. */
export interface Holdings {
  count: number;
  /** A stored subscription of this principal to `url` exists only because `url` was verified. */
  verified: boolean;
}

/**
 * A principal's live subscriptions over every event type this handler delivers by webhook: what
 * its cap counts, and whether it verified `url` already (SEP-3415: verification is per
 * (principal, url), across `arguments` and refreshes). Read on creation only, never on refresh.
 */
export async function principalHoldings(
  runtime: WebhookRuntime,
  principal: string,
  url: string,
): Promise<Holdings> {
  const holdings: Holdings = { count: 0, verified: false };
  for (const event of runtime.host.registry.events.values()) {
    if (!runtime.host.offers(event, "webhook")) continue;
    for (const record of await runtime.webhooks.ofEvent(event.descriptor.name)) {
      if (record.principal !== principal) continue;
      holdings.count++;
      if (record.url === url) holdings.verified = true;
    }
  }
  return holdings;
}
