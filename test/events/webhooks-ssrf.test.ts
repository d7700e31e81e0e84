// Webhook callbacks cannot be turned against the network (SEP-3415, SSRF prevention): every
// address a callback resolves to is checked at delivery time, the connection goes to the
// checked address, and nothing private, loopback, link-local or otherwise special is reached
// unless the operator's allow-list names it. Listeners on 127.0.0.x count every connection, to
// show that a refused callback never reached its target.
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isMcpError } from "../../src/protocol/errors.js";
import { EventsErrorCode } from "../../src/protocol/events.js";
import { createAddressPolicy } from "../../src/server/ext/events/webhooks/address.js";
import type { ResolvedAddress } from "../../src/server/ext/events/webhooks/options.js";
import { postWebhook, type SendOptions } from "../../src/server/ext/events/webhooks/send.js";
import { webhookHarness } from "../helpers/webhook-harness.js";
import { newSecret, startReceiver } from "../helpers/webhook-receiver.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP listener that counts connections (and holds them open, answering nothing). */
async function counter(host: string, port = 0): Promise<{ port: number; count: () => number }> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.on("error", () => undefined);
    cleanups.push(async () => void socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return { port: typeof address === "object" && address ? address.port : port, count: () => count };
}

async function sender(
  allow: string[] = [],
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>,
): Promise<SendOptions> {
  return {
    policy: await createAddressPolicy(allow),
    connectTimeoutMs: 1_000,
    timeoutMs: 1_000,
    lookup,
  };
}

const post = (url: string, options: SendOptions) =>
  postWebhook(new URL(url), "{}", { "webhook-id": "evt" }, options);

describe("the webhook sender", () => {
  it("should refuse every special-purpose address without connecting", async () => {
    const options = await sender();
    for (const host of [
      "127.0.0.1",
      "127.1.2.3",
      "[::1]",
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "198.18.0.1",
      "[fe80::1]",
      "[fc00::1]",
      "[fd12:3456::1]",
      "[::ffff:127.0.0.1]",
      "[::ffff:10.0.0.1]",
      "[64:ff9b::a00:1]",
      "[2002:a00:1::]",
      "[::]",
    ]) {
      expect(await post(`https://${host}/hooks`, options), host).toEqual({
        ok: false,
        reason: "connection_refused",
        refused: true,
      });
    }
  });

  it("should never reach a loopback listener that the allow-list does not name", async () => {
    const target = await counter("127.0.0.1");
    const options = await sender(["10.9.9.9", "hooks.example.com"]);
    expect(await post(`https://127.0.0.1:${target.port}/`, options)).toMatchObject({
      refused: true,
    });
    expect(await post(`http://127.0.0.1:${target.port}/`, options)).toMatchObject({
      refused: true,
    });
    expect(await post(`https://localhost:${target.port}/`, options)).toMatchObject({
      refused: true,
    });
    expect(target.count()).toBe(0);
  });

  it("should refuse a name that resolves to a private address, or to any private address among others", async () => {
    const target = await counter("127.0.0.1");
    const answers: Record<string, ResolvedAddress[]> = {
      "internal.example.com": [{ address: "10.0.0.5", family: 4 }],
      "loopback.example.com": [{ address: "127.0.0.1", family: 4 }],
      "mixed.example.com": [
        { address: "93.184.216.34", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
      "mapped.example.com": [{ address: "::ffff:169.254.169.254", family: 6 }],
    };
    const options = await sender([], async (hostname) => answers[hostname] ?? []);
    for (const host of Object.keys(answers)) {
      expect(await post(`https://${host}:${target.port}/`, options), host).toMatchObject({
        refused: true,
      });
    }
    expect(target.count()).toBe(0);
  });

  it("should check the address at every delivery, so a name rebound to loopback is refused", async () => {
    const allowed = await counter("127.0.0.2");
    const loopback = await counter("127.0.0.1", allowed.port);
    const rebinding = ["127.0.0.2", "127.0.0.1"];
    const resolver = async (): Promise<ResolvedAddress[]> => [
      { address: rebinding.shift() ?? "127.0.0.1", family: 4 },
    ];
    const options = { ...(await sender(["127.0.0.2"], resolver)), timeoutMs: 200 };
    const url = `https://rebind.example.com:${allowed.port}/hooks`;
    // First resolution: an allowed address, connected to (the listener answers no TLS).
    expect(await post(url, options)).toMatchObject({ ok: false });
    expect(allowed.count()).toBe(1);
    // Second: rebound to loopback, refused before any connection.
    expect(await post(url, options)).toMatchObject({ refused: true });
    expect(loopback.count()).toBe(0);
  });

  it("should not send a header no HTTP request can carry (an eventId with a line break)", async () => {
    const target = await counter("127.0.0.1");
    const options = await sender(["127.0.0.1"]);
    const url = new URL(`http://127.0.0.1:${target.port}/`);
    const result = await postWebhook(url, "{}", { "webhook-id": "evt\r\nx-injected: 1" }, options);
    expect(result).toMatchObject({ ok: false, refused: true });
    expect(target.count()).toBe(0);
  });

  it("should report a TLS failure as tls_error, and a closed port as connection_refused", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const options = await sender(["127.0.0.1"]);
    // https: to a plain HTTP listener: the handshake fails.
    const tls = await post(`https://127.0.0.1:${receiver.port}/hooks`, options);
    expect(tls).toEqual({ ok: false, reason: "tls_error" });
    await receiver.close();
    const closed = await post(receiver.url, options);
    expect(closed).toEqual({ ok: false, reason: "connection_refused" });
  });

  it("should give up on an endpoint that never answers, as a timeout", async () => {
    const silent = await counter("127.0.0.1");
    const options = { ...(await sender(["127.0.0.1"])), timeoutMs: 200 };
    expect(await post(`http://127.0.0.1:${silent.port}/`, options)).toEqual({
      ok: false,
      reason: "timeout",
    });
    expect(silent.count()).toBe(1);
  });
});

describe("events/subscribe to private callbacks", () => {
  it("should refuse them without a request reaching the target", async () => {
    const target = await counter("127.0.0.1");
    const harness = webhookHarness({});
    cleanups.push(() => harness.close());
    const subscribe = (url: string) =>
      harness
        .call(
          "events/subscribe",
          { name: "note.created", delivery: { url, secret: newSecret() } },
          "alice",
        )
        .then(
          () => undefined,
          (error: unknown) => (isMcpError(error) ? { code: error.code, data: error.data } : error),
        );
    // http: is for allow-listed hosts only.
    expect(await subscribe(`http://127.0.0.1:${target.port}/`)).toMatchObject({
      code: EventsErrorCode.InvalidParams,
    });
    for (const url of [
      `https://127.0.0.1:${target.port}/`,
      `https://[::1]:${target.port}/`,
      "https://10.0.0.1/hooks",
      "https://169.254.169.254/latest/meta-data",
    ]) {
      expect(await subscribe(url), url).toEqual({
        code: EventsErrorCode.CallbackEndpointError,
        data: { reason: "connection_refused" },
      });
    }
    expect(target.count()).toBe(0);
    expect(await harness.store.webhooks?.ofEvent("note.created")).toEqual([]);
  });
});
