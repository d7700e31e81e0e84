// Webhooks through the handler (createMcpHandler with events.webhooks), modern era, through
// fetch, node:http and Express; then two handlers sharing one real Redis, as two processes
// would: a subscription made through one is served by both, and each occurrence, whichever
// handler emits it, reaches the receiver once although both workers claim from the queue.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { redisStore } from "../../src/store/redis.js";
import {
  assertEventsEra,
  assertEventsMessage,
  assertEventsSchema,
} from "../helpers/events-schema.js";
import { createEventsServer, tokenAuth } from "../helpers/events-server.js";
import { legacyCall, openSession } from "../helpers/legacy.js";
import { call, type Send, withBearer } from "../helpers/modern.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { mount, TRANSPORTS } from "../helpers/transports.js";
import { newSecret, startReceiver, verifyWith } from "../helpers/webhook-receiver.js";

let redisServer: RedisServer;
const connections: Redis[] = [];
const cleanups: (() => Promise<void>)[] = [];
beforeAll(async () => {
  redisServer = await startRedisServer();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const redis of connections) await redis.quit();
  await redisServer?.close();
});

async function events(send: Send, method: string, params: Record<string, unknown>) {
  const exchange = await call(send, method, params);
  assertEventsMessage(exchange.response, method);
  return exchange;
}

describe.each(TRANSPORTS)("webhooks through %s", (transport) => {
  it("should subscribe, deliver signed occurrences and refuse a caller without a principal", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const server = createEventsServer();
    const webhooks = { allow: ["127.0.0.1"] };
    const mcp = createMcpHandler(server, { auth: tokenAuth(), events: { webhooks } });
    const mounted = await mount(transport, mcp);
    cleanups.push(() => mounted.close());
    const secret = newSecret();
    const params = { name: "note.created", delivery: { url: receiver.url, secret } };
    const subscribed = await events(withBearer(mounted.send, "alice"), "events/subscribe", params);
    const id = (subscribed.result as { id: string }).id;
    await server.emit("note.created", { id: "n1" });
    await expect.poll(() => receiver.deliveries().length).toBe(1);
    const [delivery] = receiver.deliveries();
    assertEventsSchema("EventOccurrence", delivery!.json);
    verifyWith(secret, delivery!);
    expect(delivery!.headers["x-mcp-subscription-id"]).toBe(id);

    const open = createMcpHandler(createEventsServer(), { events: { webhooks } });
    const anonymous = await mount(transport, open);
    cleanups.push(() => anonymous.close());
    const refused = await events(anonymous.send, "events/subscribe", params);
    expect(refused.response).toMatchObject({ error: { code: -32024 } });
  });
});

describe("webhooks in a legacy session (2025-11-25)", () => {
  it("should subscribe and unsubscribe inside the session, results without resultType", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const server = createEventsServer();
    const mcp = createMcpHandler(server, {
      auth: tokenAuth(),
      events: { webhooks: { allow: ["127.0.0.1"] } },
    });
    const mounted = await mount("node", mcp);
    cleanups.push(() => mounted.close());
    const send = withBearer(mounted.send, "carol");
    const session = await openSession(send);
    const params = { name: "note.created", delivery: { url: receiver.url, secret: newSecret() } };
    const subscribed = await legacyCall(send, session, "events/subscribe", params);
    assertEventsEra("legacy", subscribed.response, "events/subscribe");
    expect(subscribed.result).not.toHaveProperty("resultType");
    await server.emit("note.created", { id: "n1" });
    await expect.poll(() => receiver.deliveries().length).toBe(1);
    const unsubscribe = { name: "note.created", delivery: { url: receiver.url } };
    const ended = await legacyCall(send, session, "events/unsubscribe", unsubscribe);
    assertEventsEra("legacy", ended.response, "events/unsubscribe");
    expect(ended.result).toEqual({});
  });
});

describe("webhooks on two handlers sharing Redis", () => {
  it("should deliver each occurrence once, whichever handler emits it", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const prefix = `wh:${randomUUID()}:`;
    const handlers = [0, 1].map(() => {
      const redis = new Redis(redisServer.url);
      connections.push(redis);
      const server = createEventsServer();
      const mcp = createMcpHandler(server, {
        auth: tokenAuth(),
        store: redisStore({ redis, prefix }),
        events: { webhooks: { allow: ["127.0.0.1"], concurrency: 4 } },
      });
      return { server, mcp };
    });
    const mounted = await Promise.all(handlers.map(({ mcp }) => mount("fetch", mcp)));
    for (const each of mounted) cleanups.push(() => each.close());
    const params = { name: "note.created", delivery: { url: receiver.url, secret: newSecret() } };
    await events(withBearer(mounted[0]!.send, "alice"), "events/subscribe", params);
    // The refresh through the other handler finds the same subscription: no second challenge.
    await events(withBearer(mounted[1]!.send, "alice"), "events/subscribe", params);
    expect(receiver.received).toHaveLength(1);
    const emitted: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { server } = handlers[i % 2]!;
      emitted.push((await server.emit("note.created", { id: `n${i}` })).eventId);
    }
    await expect.poll(() => receiver.deliveries().length).toBe(20);
    const store = redisStore({ redis: connections[0]!, prefix });
    await expect.poll(() => store.deliveries?.nextDue()).toBeUndefined();
    const ids = receiver.deliveries().map((d) => String(d.headers["webhook-id"]));
    expect(ids.sort()).toEqual(emitted.sort());
  });
});
