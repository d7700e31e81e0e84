// One gateway process of the input bridge tests, which a test may kill outright: its bridge on
// Redis at argv[2] (keys under prefix argv[3]), its upstream at argv[4] (era argv[5]). Prints
// its endpoint's URL on the first line of stdout.
import { Redis } from "ioredis";
import { redisStore } from "../../src/store/redis.js";
import { startBridgeGateway } from "./input-bridge-harness.js";

const [redisUrl, prefix, upstreamUrl, era] = process.argv.slice(2);
const redis = new Redis(String(redisUrl));
const store = redisStore({ redis, prefix: String(prefix) });
const gateway = await startBridgeGateway({
  store,
  upstreamUrl: String(upstreamUrl),
  upstreamEra: era === "modern" ? "modern" : "legacy",
  errors: [],
});
process.stdout.write(`${gateway.url}\n`);
