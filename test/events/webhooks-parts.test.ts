// The webhook module's small parts on their own: the whsec_ secret rule (24 to 64 bytes), TTL
// grants, secret rotation and its grace window (signatures checked with standardwebhooks), the
// allow-list's hostnames and CIDRs (IPv4-mapped IPv6 unwrapped), and bad options refused.
import { describe, expect, it } from "vitest";
import { createAddressPolicy } from "../../src/server/ext/events/webhooks/address.js";
import { resolveWebhookOptions } from "../../src/server/ext/events/webhooks/options.js";
import {
  grantedExpiry,
  rotatedSecrets,
  subscriptionId,
} from "../../src/server/ext/events/webhooks/record.js";
import { isWebhookSecret, signedHeaders } from "../../src/server/ext/events/webhooks/sign.js";
import type { WebhookRecord } from "../../src/store/types.js";
import { newSecret, verifyWith } from "../helpers/webhook-receiver.js";

const secretOf = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString("base64")}`;

describe("webhook parts", () => {
  it("should take whsec_ secrets of 24 to 64 bytes only", () => {
    expect([24, 32, 64].map((n) => isWebhookSecret(secretOf(n)))).toEqual([true, true, true]);
    expect([0, 23, 65].map((n) => isWebhookSecret(secretOf(n)))).toEqual([false, false, false]);
    expect(isWebhookSecret(secretOf(32).replace("whsec_", ""))).toBe(false);
    expect(isWebhookSecret(`${secretOf(32)}!`)).toBe(false);
    expect(isWebhookSecret(42)).toBe(false);
  });

  it("should derive one id per key, whatever the order of the arguments' members", () => {
    const id = subscriptionId("p", "https://a.example/h", "n", { a: 1, b: 2 });
    expect(subscriptionId("p", "https://a.example/h", "n", { b: 2, a: 1 })).toBe(id);
    expect(subscriptionId("q", "https://a.example/h", "n", { a: 1, b: 2 })).not.toBe(id);
    expect(subscriptionId("p", "https://b.example/h", "n", { a: 1, b: 2 })).not.toBe(id);
  });

  it("should grant within the floor and the cap", () => {
    const options = resolveWebhookOptions({ minTtlMs: 10, ttlMs: 50, maxTtlMs: 100 });
    expect(grantedExpiry(1, options, 0)).toBe(10);
    expect(grantedExpiry(undefined, options, 0)).toBe(50);
    expect(grantedExpiry(70, options, 0)).toBe(70);
    expect(grantedExpiry(1_000, options, 0)).toBe(100);
    expect(grantedExpiry(null, options, 0)).toBe(100);
    expect(grantedExpiry(null, { ...options, noExpiry: true }, 0)).toBeNull();
  });

  it("should sign with a replaced secret until its grace ends, then with the new one only", async () => {
    const [old, fresh] = [newSecret(), newSecret()];
    const record = { secrets: [{ secret: old }] } as Pick<WebhookRecord, "secrets">;
    const now = Date.now();
    const rotated = rotatedSecrets(record as WebhookRecord, fresh, 60_000, now);
    expect(rotated).toEqual([{ secret: fresh }, { secret: old, until: now + 60_000 }]);
    const signed = async (at: number) => {
      const headers = await signedHeaders("e", "{}", rotated, "sub_x", at);
      return { headers, body: "{}", json: {} };
    };
    const during = await signed(now);
    expect(during.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    verifyWith(old, during);
    verifyWith(fresh, during);
    // Past the grace window (a minute ahead: within the receiver's five-minute tolerance).
    const after = await signed(now + 61_000);
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    verifyWith(fresh, after);
    expect(() => verifyWith(old, after)).toThrow();
  });

  it("should allow the hostnames and ranges listed, and nothing else that is not public", async () => {
    const policy = await createAddressPolicy(["hooks.internal", "10.1.0.0/16", "::1", "127.0.0.5"]);
    expect(policy.allowsHost("hooks.internal")).toBe(true);
    expect(policy.allowsHost("HOOKS.internal.")).toBe(true);
    expect(policy.allowsHost("other.internal")).toBe(false);
    expect(policy.allowsAddress("10.1.2.3")).toBe(true);
    expect(policy.allowsAddress("::ffff:10.1.2.3")).toBe(true);
    expect(policy.allowsAddress("10.2.0.1")).toBe(false);
    expect(policy.allowsAddress("::1")).toBe(true);
    expect(policy.allowsAddress("127.0.0.5")).toBe(true);
    expect(policy.allowsAddress("127.0.0.1")).toBe(false);
    expect(policy.allowsAddress("93.184.216.34")).toBe(true);
    expect(policy.allowsAddress("2606:4700::1111")).toBe(true);
    expect(policy.allowsAddress("not an address")).toBe(false);
    // IPv4-compatible (::/96, deprecated): 127.0.0.1, 10.0.0.1 and even a public IPv4 refused.
    for (const compatible of ["::7f00:1", "::127.0.0.1", "::a00:1", "::5db8:d822"])
      expect(policy.allowsAddress(compatible)).toBe(false);
    await expect(createAddressPolicy(["bad host!"])).rejects.toThrow();
  });

  it("should refuse options that cannot work", () => {
    expect(() => resolveWebhookOptions({ minTtlMs: 10, maxTtlMs: 5 })).toThrow();
    expect(() => resolveWebhookOptions({ retryDelaysMs: [-1] })).toThrow();
    expect(() => resolveWebhookOptions({ concurrency: 0 })).toThrow();
    expect(() => resolveWebhookOptions({ verificationsPerMinute: 0 })).toThrow();
  });
});
