// Webhooks across three processes on one Redis node and on a three-master Redis Cluster,
// behind the round-robin proxy, while each is SIGTERMed and restarted in turn: every
// occurrence, whichever process emitted it, reaches the receiver exactly once (one claimed job
// per subscription and occurrence; a draining process finishes its deliveries in flight before
// it exits), and the subscription, made through one process, outlives every process. A
// receiver answering 500 sees the retry schedule, then suspension; one answering 410 is never
// retried.
import { fileURLToPath } from "node:url";
import { Cluster as RedisClusterClient, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisStore } from "../../src/store/redis.js";
import {
  type Cluster,
  type ClusterServer,
  type RedisTopology,
  startCluster,
} from "../helpers/cluster.js";
import { assertEventsSchema } from "../helpers/events-schema.js";
import { call, viaUrl, withBearer } from "../helpers/modern.js";
import {
  newSecret,
  startReceiver,
  verifyWith,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.js";

const WEBHOOK_SERVER: ClusterServer = {
  script: fileURLToPath(new URL("../helpers/webhook-cluster-server.ts", import.meta.url)),
  listening: /^listening (\d+)$/m,
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each<RedisTopology>(["standalone", "cluster"])(
  "webhooks across three processes behind the round-robin proxy (Redis store, %s)",
  (topology) => {
    let cluster: Cluster;
    let receiver: WebhookReceiver;
    let redis: Redis | RedisClusterClient;
    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, server: WEBHOOK_SERVER, topology });
      receiver = await startReceiver();
      redis = cluster.redisCluster
        ? new RedisClusterClient([...cluster.redisCluster.startupNodes])
        : new Redis(cluster.redis.url);
    }, 120_000);
    afterAll(async () => {
      await redis?.quit();
      await receiver?.close();
      await cluster?.stop();
    });

    it("should deliver each occurrence exactly once while every process restarts", {
      timeout: 180_000,
    }, async () => {
      // Each answer takes a moment, so that SIGTERMs land while deliveries are in flight.
      receiver.delayMs = 40;
      const send = withBearer(viaUrl(cluster.url), "alice");
      const secret = newSecret();
      const params = { name: "note.created", delivery: { url: receiver.url, secret } };
      const subscribed = await call(send, "events/subscribe", params);
      assertEventsSchema("SubscribeEventsResult", subscribed.result);
      const emitted: string[] = [];
      let failedEmits = 0;
      let running = true;
      const emitter = (async () => {
        for (let i = 0; running; i++) {
          try {
            const exchange = await call(send, "tools/call", {
              name: "emit_event",
              arguments: { id: `n${i}` },
            });
            const content = exchange.result?.structuredContent as { eventId?: string } | undefined;
            if (content?.eventId) emitted.push(content.eventId);
            else failedEmits++;
          } catch {
            failedEmits++;
          }
          await pause(20);
        }
      })();
      for (const backend of cluster.backends) {
        await pause(800);
        await backend.terminate(10_000);
        await pause(300);
        await backend.restart();
      }
      await pause(800);
      running = false;
      await emitter;

      const store = redisStore({ redis });
      await expect.poll(() => store.deliveries?.nextDue(), { timeout: 30_000 }).toBeUndefined();
      const counts = new Map<string, number>();
      for (const delivery of receiver.deliveries()) {
        const id = String(delivery.headers["webhook-id"]);
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      console.log(
        "webhooks rolling restart:",
        JSON.stringify({
          emitted: emitted.length,
          failedEmits,
          received: receiver.deliveries().length,
        }),
      );
      expect(emitted.length).toBeGreaterThan(30);
      expect([...counts].filter(([, count]) => count !== 1)).toEqual([]);
      expect(emitted.filter((id) => !counts.has(id))).toEqual([]);
      for (const delivery of receiver.deliveries().slice(0, 5)) {
        assertEventsSchema("EventOccurrence", delivery.json);
        verifyWith(secret, delivery);
      }
      // Refreshed through a restarted process: the same subscription, still healthy.
      const refreshed = await call(send, "events/subscribe", params);
      expect(refreshed.result).toMatchObject({
        id: subscribed.result.id,
        deliveryStatus: { active: true, lastError: null },
      });
    });
    it("should retry a failing receiver on the schedule, then suspend it, and never retry a 410", {
      timeout: 60_000,
    }, async () => {
      const send = withBearer(viaUrl(cluster.url), "bob");
      const failing = await startReceiver();
      const declining = await startReceiver();
      try {
        const subscribe = (target: WebhookReceiver) =>
          call(send, "events/subscribe", {
            name: "note.created",
            delivery: { url: target.url, secret: newSecret() },
          });
        await subscribe(failing);
        await subscribe(declining);
        failing.respond = (request) =>
          request.json.type === "verification"
            ? { status: 200, body: { challenge: request.json.challenge } }
            : { status: 500 };
        declining.respond = () => ({ status: 410 });
        const exchange = await call(send, "tools/call", {
          name: "emit_event",
          arguments: { id: "x" },
        });
        const { eventId } = exchange.result.structuredContent as { eventId: string };
        const store = redisStore({ redis });
        await expect.poll(() => failing.deliveries().length, { timeout: 30_000 }).toBe(5);
        await expect.poll(() => store.deliveries?.nextDue(), { timeout: 30_000 }).toBeUndefined();
        // One attempt and four retries (retryDelaysMs), whichever processes made them.
        expect(failing.deliveries().map((d) => d.headers["webhook-id"])).toEqual(
          Array(5).fill(eventId),
        );
        expect(declining.deliveries().map((d) => d.headers["webhook-id"])).toEqual([eventId]);
        const failed = await subscribe(failing);
        expect(failed.result.deliveryStatus).toMatchObject({
          active: false,
          lastError: "http_5xx",
        });
        const declined = await subscribe(declining);
        expect(declined.result.deliveryStatus).toMatchObject({ active: true, lastError: null });
      } finally {
        await failing.close();
        await declining.close();
      }
    });
  },
);
