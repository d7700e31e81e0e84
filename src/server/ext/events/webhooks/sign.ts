import type { Webhook as StandardWebhook } from "standardwebhooks";

type WebhookClass = typeof StandardWebhook;

let loading: Promise<WebhookClass> | undefined;

/** standardwebhooks, an optional peer: loaded only when webhooks are on. */
export function loadStandardWebhooks(): Promise<WebhookClass> {
  loading ??= import("standardwebhooks").then(
    (module) => module.Webhook,
    (error: unknown) => {
      loading = undefined;
      throw new Error("Webhooks need the optional peer dependency standardwebhooks", {
        cause: error,
      });
    },
  );
  return loading;
}

/** A signing secret of a subscription, and until when a rotated-out one still signs. */
export interface SigningSecret {
  secret: string;
  until?: number;
}

/**
 * The Standard Webhooks headers of one attempt (SEP-3415, signature scheme): a fresh timestamp,
 * one `v1,` signature per secret still signing (the newest, and during a rotation the ones it
 * replaced until their `until`), space-separated, and `X-MCP-Subscription-Id`.
 */
export async function signedHeaders(
  webhookId: string,
  body: string,
  secrets: readonly SigningSecret[],
  subscriptionId: string,
  now = Date.now(),
): Promise<Record<string, string>> {
  const Webhook = await loadStandardWebhooks();
  const timestamp = new Date(now);
  const signing = secrets.filter((entry, index) => index === 0 || (entry.until ?? 0) > now);
  const signatures = signing.map(({ secret }) =>
    new Webhook(secret).sign(webhookId, timestamp, body),
  );
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": String(Math.floor(now / 1000)),
    "webhook-signature": signatures.join(" "),
    "x-mcp-subscription-id": subscriptionId,
  };
}

/** True when `secret` is `whsec_` and base64 of 24 to 64 bytes (SEP-3415, secret generation). */
export function isWebhookSecret(secret: unknown): secret is string {
  if (typeof secret !== "string" || !secret.startsWith("whsec_")) return false;
  const encoded = secret.slice("whsec_".length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return false;
  const padding = encoded.endsWith("==") ? 2 : encoded.endsWith("=") ? 1 : 0;
  const bytes = (encoded.length / 4) * 3 - padding;
  return bytes >= 24 && bytes <= 64;
}
