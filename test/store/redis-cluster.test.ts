import { randomUUID } from "node:crypto";
import { Cluster } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { redisStore } from "../../src/store/redis.js";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.js";
import { CONTRACT_OPTIONS, describeStoreContract } from "./contract.js";

// A one-node Redis Cluster still refuses commands and scripts whose keys span hash slots
// (CROSSSLOT), so the whole contract passing here shows the key layout suits a real cluster.
let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer({ cluster: true });
});
afterAll(async () => {
  await server?.close();
});

describeStoreContract("redisStore on Redis Cluster", async () => {
  const prefix = `test:${randomUUID()}:`;
  const nodes = [{ host: "127.0.0.1", port: server.port }];
  const [one, two] = [new Cluster(nodes), new Cluster(nodes)];
  const store = redisStore({ redis: one, prefix, ...CONTRACT_OPTIONS });
  const peer = redisStore({ redis: two, prefix, ...CONTRACT_OPTIONS });
  return {
    store,
    peer,
    async cleanup() {
      await Promise.all([store.close(), peer.close()]);
      await Promise.all([one.quit(), two.quit()]);
    },
  };
});
