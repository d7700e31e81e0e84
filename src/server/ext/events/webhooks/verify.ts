import { randomBytes, timingSafeEqual } from "node:crypto";
import { controlWebhookId, eventsError } from "../../../../protocol/events.js";
import { isObject } from "../../../../protocol/messages.js";
import type { NonceStore } from "../../../../store/types.js";
import { postWebhook, type SendOptions } from "./send.js";
import { type SigningSecret, signedHeaders } from "./sign.js";

/** Who asks to deliver where: the pair verification is cached for. */
export interface VerificationTarget {
  principal: string;
  url: URL;
  subscriptionId: string;
  secrets: readonly SigningSecret[];
}

/**
 * The verification handshake (SEP-3415, endpoint verification): a signed `verification`
 * envelope with a single-use nonce, POSTed through the same SSRF-hardened path as deliveries;
 * the endpoint proves intent by echoing the nonce in a 2xx body, compared in constant time.
 * Rejects with `CallbackEndpointError`: `challenge_failed` for a reachable endpoint that did
 * not echo it (whatever it answered), else the connection's failure category.
 */
export async function verifyEndpoint(target: VerificationTarget, send: SendOptions): Promise<void> {
  const challenge = randomBytes(24).toString("base64url");
  const body = JSON.stringify({ type: "verification", challenge });
  const headers = await signedHeaders(
    controlWebhookId("verification"),
    body,
    target.secrets,
    target.subscriptionId,
  );
  const result = await postWebhook(target.url, body, headers, send);
  if (!result.ok && (result.reason === "http_4xx" || result.reason === "http_5xx"))
    throw eventsError("CallbackEndpointError", { reason: "challenge_failed" });
  if (!result.ok) throw eventsError("CallbackEndpointError", { reason: result.reason });
  if (!echoes(result.body, challenge))
    throw eventsError("CallbackEndpointError", { reason: "challenge_failed" });
}

/**
 * Takes one of the `perMinute` verification slots of `host` in this minute, across every process
 * sharing the store (SEP-3415: verification POSTs SHOULD be rate-limited per destination host,
 * so that subscribing many URLs of one victim cannot flood it). False when none is left.
 */
export async function verificationSlot(
  nonces: NonceStore,
  host: string,
  perMinute: number,
  now = Date.now(),
): Promise<boolean> {
  const minute = Math.floor(now / 60_000);
  for (let slot = 0; slot < perMinute; slot++) {
    if (await nonces.claim(`webhook-verify:${host}:${minute}:${slot}`, 120_000)) return true;
  }
  return false;
}

/** True when a response body is `{"challenge": <the nonce>}`. */
function echoes(body: string, challenge: string): boolean {
  let echoed: unknown;
  try {
    const parsed: unknown = JSON.parse(body);
    echoed = isObject(parsed) ? parsed.challenge : undefined;
  } catch {
    return false;
  }
  if (typeof echoed !== "string") return false;
  const expected = Buffer.from(challenge);
  const given = Buffer.from(echoed);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Endpoints verified lately, per (principal, url), in this process: a second subscription of
 * the same principal to the same URL (other arguments, another event type) is not challenged
 * again while it is remembered. Stored subscriptions are proof of their own verification.
 */
export class VerifiedEndpoints {
  readonly #until = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #max: number;

  constructor(ttlMs: number, max = 10_000) {
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  has(principal: string, url: string, now = Date.now()): boolean {
    const key = JSON.stringify([principal, url]);
    const until = this.#until.get(key);
    if (until !== undefined && until <= now) this.#until.delete(key);
    return until !== undefined && until > now;
  }

  add(principal: string, url: string, now = Date.now()): void {
    const key = JSON.stringify([principal, url]);
    this.#until.delete(key);
    this.#until.set(key, now + this.#ttlMs);
    // Oldest first: a Map iterates in insertion order.
    for (const oldest of this.#until.keys()) {
      if (this.#until.size <= this.#max) break;
      this.#until.delete(oldest);
    }
  }
}
