/** A resolved address, as `dns.lookup` gives one. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Webhook delivery (`events/subscribe`), the `events.webhooks` handler option. */
export interface WebhookOptions {
  /**
   * Hostnames and CIDRs (`"localhost"`, `"127.0.0.1"`, `"10.0.0.0/8"`) that callbacks may reach
   * although they are not globally routable; `http:` is accepted for these hosts only (local
   * development, tests). Everything else must be `https:` to a public address. @default []
   */
  allow?: string[];
  /** The TTL granted when the subscriber suggests none, in milliseconds. @default 3_600_000 */
  ttlMs?: number;
  /**
   * The longest TTL granted, in milliseconds; also how long a suspended no-expiry subscription
   * may keep failing before it is dropped. @default 86_400_000
   */
  maxTtlMs?: number;
  /** The shortest TTL granted: shorter suggestions are clamped up to it. @default 60_000 */
  minTtlMs?: number;
  /**
   * Grant no expiry (`refreshBefore: null`) to a subscriber that asks for it (`ttlMs: null`);
   * only with a durable store. @default false
   */
  noExpiry?: boolean;
  /** Subscriptions one principal may hold (`ResourceExhausted` beyond). @default 100 */
  maxPerPrincipal?: number;
  /**
   * Delays before each retry of a failed delivery, in milliseconds (jittered by up to a fifth);
   * its length is the number of retries. @default [10_000, 60_000, 180_000, 480_000]
   */
  retryDelaysMs?: number[];
  /**
   * A subscription whose deliveries have failed for this long, with no success between, is
   * suspended when one of its events runs out of retries. @default 600_000
   */
  suspendAfterMs?: number;
  /** How often a suspended subscription's owed deliveries look again for a refresh. @default 60_000 */
  suspendedRecheckMs?: number;
  /**
   * Verification POSTs to one host per minute, across the fleet (SEP-3415: rate-limited per
   * destination host); beyond, subscribing is refused with `ResourceExhausted`. @default 10
   */
  verificationsPerMinute?: number;
  /** How long a rotated-out secret still signs deliveries. @default 900_000 */
  rotationGraceMs?: number;
  /** Time allowed to connect to a callback, in milliseconds. @default 3_000 */
  connectTimeoutMs?: number;
  /** Time allowed for one delivery, connection to response, in milliseconds. @default 5_000 */
  timeoutMs?: number;
  /** Deliveries one process makes at once. @default 16 */
  concurrency?: number;
  /**
   * Resolves a callback's hostname (tests, custom DNS); every address it gives is checked.
   * @default dns.lookup with `all: true`
   */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** {@link WebhookOptions} with every default applied. */
export type ResolvedWebhookOptions = Required<Omit<WebhookOptions, "lookup">> &
  Pick<WebhookOptions, "lookup">;

/** Applies the defaults; throws on a setting that cannot work. */
export function resolveWebhookOptions(options: WebhookOptions = {}): ResolvedWebhookOptions {
  const resolved: ResolvedWebhookOptions = {
    allow: options.allow ?? [],
    ttlMs: options.ttlMs ?? 3_600_000,
    maxTtlMs: options.maxTtlMs ?? 86_400_000,
    minTtlMs: options.minTtlMs ?? 60_000,
    noExpiry: options.noExpiry ?? false,
    maxPerPrincipal: options.maxPerPrincipal ?? 100,
    retryDelaysMs: options.retryDelaysMs ?? [10_000, 60_000, 180_000, 480_000],
    suspendAfterMs: options.suspendAfterMs ?? 600_000,
    suspendedRecheckMs: options.suspendedRecheckMs ?? 60_000,
    verificationsPerMinute: options.verificationsPerMinute ?? 10,
    rotationGraceMs: options.rotationGraceMs ?? 900_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 3_000,
    timeoutMs: options.timeoutMs ?? 5_000,
    concurrency: options.concurrency ?? 16,
    lookup: options.lookup,
  };
  if (resolved.minTtlMs > resolved.maxTtlMs || resolved.minTtlMs <= 0)
    throw new Error("events.webhooks: minTtlMs must be positive and at most maxTtlMs");
  if (resolved.retryDelaysMs.some((delay) => !(delay >= 0)))
    throw new Error("events.webhooks: retryDelaysMs must be non-negative");
  if (!(resolved.verificationsPerMinute >= 1))
    throw new Error("events.webhooks: verificationsPerMinute must be at least 1");
  if (resolved.timeoutMs <= 0 || resolved.connectTimeoutMs <= 0 || resolved.concurrency < 1)
    throw new Error("events.webhooks: timeouts and concurrency must be positive");
  return resolved;
}
