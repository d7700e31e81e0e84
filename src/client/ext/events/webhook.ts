import { EventsMethod } from "../../../protocol/events.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { Backoff } from "../../backoff.js";
import { isTransient } from "../../listen.js";
import { AsyncQueue } from "../../queue.js";
import { sleep } from "../../sse.js";
import { asSubscribeResult } from "./results.js";
import {
  type EventsHost,
  statusOf,
  type WebhookStatus,
  type WebhookSubscribeOptions,
  type WebhookSubscription,
} from "./types.js";
import { generateWebhookSecret } from "./webhook-secrets.js";

/** How often a subscription granted no expiry is refreshed anyway (SEP-3415 asks for some). */
const HEALTH_CHECK_MS = 3_600_000;
/** The soonest a refresh comes, whatever the grant. */
const MIN_REFRESH_MS = 1_000;

/**
 * A webhook subscription (SEP-3415, webhook delivery): `events/subscribe` with the receiver's
 * URL and a `whsec_` secret (generated from a CSPRNG unless given, told to `webhook.secrets`
 * before subscribing, bound to the id after), then again at three quarters of each grant with
 * the latest cursor; `close()` or the signal sends `events/unsubscribe`. The occurrences go to
 * the receiver; this iterates each answer's status (grant, cursor, `deliveryStatus`).
 */
export class WebhookHandle extends AsyncQueue<WebhookStatus> implements WebhookSubscription {
  readonly delivery = "webhook";
  readonly subscribed: Promise<WebhookStatus>;
  readonly #host: EventsHost;
  readonly #name: string;
  readonly #args: JsonObject;
  readonly #options: WebhookSubscribeOptions;
  readonly #controller = new AbortController();
  #cursor: string | null;
  #secret: string;
  #settle: { resolve(status: WebhookStatus): void; reject(error: unknown): void } | undefined;
  #unsubscribed: Promise<void> | undefined;

  constructor(host: EventsHost, name: string, args: JsonObject, options: WebhookSubscribeOptions) {
    super();
    this.#host = host;
    this.#name = name;
    this.#args = args;
    this.#options = options;
    this.#cursor = options.cursor ?? null;
    this.#secret = options.webhook.secret ?? generateWebhookSecret();
    this.subscribed = new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    this.subscribed.catch(() => {});
    // Unsubscribing is eager cleanup only (the grant lapses anyway): a failure here is dropped.
    options.signal?.addEventListener("abort", () => this.close().catch(() => {}), { once: true });
    this.#run().catch((error: unknown) => {
      this.#settle?.reject(error);
      this.end(this.#controller.signal.aborted ? undefined : error);
    });
  }

  get cursor(): string | null {
    return this.#cursor;
  }

  get secret(): string {
    return this.#secret;
  }

  /**
   * Rotates the secret (SEP-3415, secret rotation): the new one is bound to the id beside the
   * old, then sent by a refresh now; the server signs with both for its grace window.
   */
  async rotateSecret(secret: string = generateWebhookSecret()): Promise<WebhookStatus> {
    const { id } = await this.subscribed;
    await this.#options.webhook.secrets?.bind(id, secret);
    this.#secret = secret;
    const status = statusOf(asSubscribeResult(await this.#subscribe(this.#controller.signal)));
    this.#take(status);
    return status;
  }

  advance(cursor: string | null): void {
    if (cursor === this.#cursor) return;
    this.#cursor = cursor;
    this.#options.onCursor?.(cursor);
  }

  /** Stops refreshing and unsubscribes (once, whatever calls it). */
  override close(): Promise<void> {
    if (this.#unsubscribed) return this.#unsubscribed;
    this.#controller.abort(new Error("The subscription was closed"));
    super.close();
    this.#unsubscribed = this.subscribed.then(
      () => this.#unsubscribe(),
      () => {},
    );
    return this.#unsubscribed;
  }

  /** A `break` out of `for await` unsubscribes, and throws if that fails. */
  override async return(): Promise<IteratorResult<WebhookStatus>> {
    await this.close();
    return { value: undefined, done: true };
  }

  async #run(): Promise<void> {
    const signal = this.#controller.signal;
    const { secrets } = this.#options.webhook;
    const secret = this.#secret;
    await secrets?.add(secret);
    let first: WebhookStatus;
    try {
      first = statusOf(asSubscribeResult(await this.#subscribe(signal)));
    } catch (error) {
      await secrets?.discard?.(secret);
      throw error;
    }
    await secrets?.bind(first.id, secret);
    this.#take(first);
    this.#settle?.resolve(first);
    const backoff = new Backoff();
    let grant = first.refreshBefore;
    for (;;) {
      await sleep(this.#refreshIn(grant), signal);
      try {
        const status = statusOf(asSubscribeResult(await this.#subscribe(signal)));
        backoff.reset();
        this.#take(status);
        grant = status.refreshBefore;
      } catch (error) {
        if (signal.aborted || !isTransient(error)) throw error;
        await backoff.wait(error, signal);
        grant = new Date().toISOString();
      }
    }
  }

  #take(status: WebhookStatus): void {
    this.advance(status.cursor);
    this.push(status);
  }

  /** Milliseconds to the next refresh: three quarters of the grant left, or the health check. */
  #refreshIn(refreshBefore: string | null): number {
    if (refreshBefore === null) return this.#options.healthCheckMs ?? HEALTH_CHECK_MS;
    const left = Date.parse(refreshBefore) - Date.now();
    return Math.max(MIN_REFRESH_MS, Number.isNaN(left) ? 0 : (left * 3) / 4);
  }

  #subscribe(signal: AbortSignal): Promise<JsonObject> {
    const { webhook, maxAgeMs, ttlMs } = this.#options;
    const params: JsonObject = {
      name: this.#name,
      arguments: this.#args,
      delivery: { mode: "webhook", url: webhook.url, secret: this.#secret },
      cursor: this.#cursor,
    };
    if (maxAgeMs !== undefined) params.maxAgeMs = maxAgeMs;
    if (ttlMs !== undefined) params.ttlMs = ttlMs;
    return this.#host.request(EventsMethod.subscribe, params, { signal });
  }

  async #unsubscribe(): Promise<void> {
    const params = {
      name: this.#name,
      arguments: this.#args,
      delivery: { url: this.#options.webhook.url },
    };
    await this.#host.request(EventsMethod.unsubscribe, params, {});
    const { id } = await this.subscribed;
    await this.#options.webhook.secrets?.forget?.(id);
  }
}
