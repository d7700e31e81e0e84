import { toBase64 } from "../../../utils/base64.js";

/** Random bytes in a secret we generate (SEP-3415 allows 24 to 64). */
const SECRET_BYTES = 32;

/**
 * A fresh Standard Webhooks secret, `whsec_` and the base64 of 32 bytes from the platform's
 * CSPRNG (SEP-3415: client SDKs generate the secret; hand-picked values are not encouraged).
 *
 * @example
 * ```ts
 * import { generateWebhookSecret } from "mcp-mount/events/receiver";
 * const secret = generateWebhookSecret(); // "whsec_…"
 * ```
 */
export function generateWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)))}`;
}

/**
 * Where a webhook subscription puts its secret so that the receiver can verify what arrives:
 * `add` before `events/subscribe` (the verification challenge comes during it, naming an id the
 * receiver has not been told), `bind` once the id is known.
 */
export interface WebhookSecretRegistry {
  add(secret: string): void | Promise<void>;
  bind(subscriptionId: string, secret: string): void | Promise<void>;
  /** Drops a secret added for a subscribe that failed. */
  discard?(secret: string): void | Promise<void>;
  /** Drops a subscription's secrets once it is unsubscribed. */
  forget?(subscriptionId: string): void | Promise<void>;
}

/**
 * The secrets an in-process receiver verifies with, by subscription id: a secret added and not
 * yet bound is tried on a verification challenge for an id the store does not know (SEP-3415,
 * endpoint verification), and bound to that id once it verifies. An id keeps every secret bound to it, so a
 * rotated secret and its predecessor both verify until `forget`.
 *
 * @example
 * ```ts
 * import { createEventsReceiver, WebhookSecrets } from "mcp-mount/events/receiver";
 * const secrets = new WebhookSecrets();
 * const receiver = createEventsReceiver({ secrets, onEvent: (event) => console.log(event.name) });
 * ```
 */
export class WebhookSecrets implements WebhookSecretRegistry {
  readonly #unbound = new Set<string>();
  readonly #byId = new Map<string, string[]>();

  /** Adds a secret not yet bound to a subscription id. */
  add(secret: string): void {
    this.#unbound.add(secret);
  }

  /** Drops a secret that was added and not bound (its subscribe failed). */
  discard(secret: string): void {
    this.#unbound.delete(secret);
  }

  /** Binds `secret` to `subscriptionId`, beside the secrets already bound to it. */
  bind(subscriptionId: string, secret: string): void {
    this.#unbound.delete(secret);
    const bound = this.#byId.get(subscriptionId) ?? [];
    if (!bound.includes(secret)) this.#byId.set(subscriptionId, [...bound, secret]);
  }

  /** The secrets bound to `subscriptionId`; none for an id not known yet. */
  lookup(subscriptionId: string): string[] {
    return this.#byId.get(subscriptionId) ?? [];
  }

  /** The secrets added and not bound yet: tried on a verification challenge. */
  pending(): string[] {
    return [...this.#unbound];
  }

  /** Forgets a subscription's secrets, or with `secret` that one only (after a rotation). */
  forget(subscriptionId: string, secret?: string): void {
    const kept = secret ? (this.#byId.get(subscriptionId) ?? []).filter((s) => s !== secret) : [];
    if (kept.length > 0) this.#byId.set(subscriptionId, kept);
    else this.#byId.delete(subscriptionId);
  }
}
