import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { McpClient, type Notification, ResultCache } from "../../src/client/index.js";
import { McpServer } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { type OurServer, startOurServer } from "./servers.js";

describe.each(["modern", "legacy"] as const)("McpClient caching and listen, %s era", (era) => {
  let ours: OurServer;
  const seen: string[] = [];
  const count = (method: string) => seen.filter((m) => m === method).length;

  beforeEach(async () => {
    seen.length = 0;
    ours = await startOurServer("node", { server: createFixtureServer(), seen });
  });
  afterEach(() => ours.close());

  it("should notify list changes and resource updates through listen()", async () => {
    const client = await McpClient.connect(ours.url, { ...ours.reach, era });
    const subscription = client.listen({
      toolsListChanged: true,
      resourceSubscriptions: ["test://static"],
    });
    expect(await subscription.acknowledged).toMatchObject({
      toolsListChanged: true,
      resourceSubscriptions: ["test://static"],
    });
    const received: Notification[] = [];
    const reading = (async () => {
      for await (const notification of subscription) {
        received.push(notification);
        if (received.length === 2) break;
      }
    })();
    ours.server.notifyPromptsListChanged(); // not asked for: never delivered
    ours.server.tool({ name: "added" }, () => "new");
    ours.server.notifyResourceUpdated("test://static");
    await reading;
    expect(received.map((n) => n.method)).toEqual([
      "notifications/tools/list_changed",
      "notifications/resources/updated",
    ]);
    expect(received[1]!.params).toMatchObject({ uri: "test://static" });
    await client.close();
  });

  it("should keep results for their ttlMs and drop them on a list change", async () => {
    const client = await McpClient.connect(ours.url, { ...ours.reach, era });
    const subscription = client.listen({ toolsListChanged: true });
    await subscription.acknowledged;
    await client.tools();
    await client.tools();
    await client.readResource("test://static");
    await client.readResource("test://static");
    // Legacy results carry no ttlMs: nothing is kept.
    expect(count("tools/list")).toBe(era === "modern" ? 1 : 2);
    expect(count("resources/read")).toBe(era === "modern" ? 1 : 2);
    await client.tools({ fresh: true });
    expect(count("tools/list")).toBe(era === "modern" ? 2 : 3);
    ours.server.tool({ name: "added" }, () => "new");
    const next = await subscription.next();
    expect(next.value?.method).toBe("notifications/tools/list_changed");
    expect((await client.tools()).map((t) => t.name)).toContain("added");
    subscription.close();
    expect(await subscription.next()).toEqual({ value: undefined, done: true });
    await client.close();
  });
});

describe("McpClient listen, modern era, on shutdown", () => {
  it("should end open subscriptions when the client closes", async () => {
    const ours = await startOurServer("node");
    const client = await McpClient.connect(ours.url, { ...ours.reach });
    const subscription = client.listen({ toolsListChanged: true });
    await subscription.acknowledged;
    const done = subscription.next();
    await client.close();
    expect(await done).toEqual({ value: undefined, done: true });
    await expect.poll(() => ours.mcp.stats().streams).toBe(0);
    await ours.close();
  });

  it("should end the iteration when the server closes the listen stream, with reconnect: false", async () => {
    const ours = await startOurServer("node");
    const client = await McpClient.connect(ours.url, { ...ours.reach });
    const subscription = client.listen({ toolsListChanged: true }, { reconnect: false });
    await subscription.acknowledged;
    const done = subscription.next();
    await ours.mcp.close();
    expect(await done).toEqual({ value: undefined, done: true });
    await client.close();
    await ours.close();
  });
});

describe("a ResultCache shared by several clients", () => {
  it("should share public results with every client and private ones within a context", async () => {
    const seen: string[] = [];
    const server = new McpServer({
      name: "shared",
      version: "1.0.0",
      cache: {
        tools: { ttlMs: 60_000, cacheScope: "private" },
        prompts: { ttlMs: 60_000, cacheScope: "public" },
      },
    });
    server.tool({ name: "mine" }, () => "x");
    server.prompt({ name: "ours" }, () => "y");
    const ours = await startOurServer("fetch", { server, seen });
    const cache = new ResultCache();
    const connect = (cacheContext: string) =>
      McpClient.connect(ours.url, { ...ours.reach, cache, cacheContext });
    const [alice, bob, alice2] = await Promise.all([
      connect("alice"),
      connect("bob"),
      connect("alice"),
    ]);
    const count = (method: string) => seen.filter((m) => m === method).length;
    await alice.prompts();
    await bob.prompts();
    expect(count("prompts/list")).toBe(1);
    await alice.tools();
    await alice2.tools();
    expect(count("tools/list")).toBe(1);
    await bob.tools();
    expect(count("tools/list")).toBe(2);
    await Promise.all([alice.close(), bob.close(), alice2.close()]);
    await ours.close();
  });
});
