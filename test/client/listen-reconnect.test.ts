import { afterEach, describe, expect, it } from "vitest";
import { McpClient, type Notification } from "../../src/client/index.js";
import { sleep } from "../helpers/sleep.js";
import { startWatchedServer, type WatchedServer } from "./servers.js";

const RESYNC = { _meta: { "mcp-mount/resync": true } };
const fast = { initialDelayMs: 20, maxDelayMs: 100 };

function portOf(url: string): number {
  return Number(new URL(url).port);
}

describe("McpClient listen, modern era, when the stream drops", () => {
  const servers: WatchedServer[] = [];
  const start = async (port?: number) => {
    const server = await startWatchedServer(port === undefined ? {} : { port });
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it("should reconnect a cut stream, announce a resync, then deliver new changes", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    const subscription = client.listen(
      {
        toolsListChanged: true,
        promptsListChanged: true,
        resourceSubscriptions: ["test://static"],
      },
      { reconnect: fast },
    );
    await subscription.acknowledged;
    await expect.poll(() => ours.listenStreams.size).toBe(1);
    for (const stream of ours.listenStreams) stream.destroy();
    const resync: Notification[] = [];
    for (let i = 0; i < 3; i++) resync.push((await subscription.next()).value!);
    expect(resync).toEqual([
      { method: "notifications/tools/list_changed", params: RESYNC },
      { method: "notifications/prompts/list_changed", params: RESYNC },
      { method: "notifications/resources/updated", params: { uri: "test://static", ...RESYNC } },
    ]);
    ours.server.notifyToolsListChanged();
    const next = await subscription.next();
    expect(next.value?.method).toBe("notifications/tools/list_changed");
    expect(next.value?.params?._meta).not.toHaveProperty(["mcp-mount/resync"]);
    const posts = ours.requests.filter((r) => r.method === "POST");
    expect(posts.length).toBeGreaterThanOrEqual(3); // discover, listen, listen again
    await client.close();
    expect(await subscription.next()).toEqual({ value: undefined, done: true });
  });

  it("should drop the cached lists a resync covers", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    const subscription = client.listen({ toolsListChanged: true }, { reconnect: fast });
    await subscription.acknowledged;
    await client.tools();
    const lists = () => ours.requests.length;
    const before = lists();
    await client.tools();
    expect(lists()).toBe(before); // cached
    // A change the dropped stream never carries: only the resync tells the client.
    for (const stream of ours.listenStreams) stream.destroy();
    ours.server.tool({ name: "added_while_away" }, () => "x");
    expect((await subscription.next()).value).toMatchObject({ params: RESYNC });
    expect((await client.tools()).map((t) => t.name)).toContain("added_while_away");
    subscription.close();
    await client.close();
  });

  it("should follow a server that completes the stream on shutdown to its successor", async () => {
    const first = await start();
    const port = portOf(first.url);
    const client = await McpClient.connect(first.url, { era: "modern", eraCache: false });
    const subscription = client.listen({ toolsListChanged: true }, { reconnect: fast });
    await subscription.acknowledged;
    const resynced = subscription.next();
    await first.close();
    // Down long enough for the client to meet refused connections, which it retries with backoff.
    await sleep(150);
    const second = await start(port);
    expect((await resynced).value).toEqual({
      method: "notifications/tools/list_changed",
      params: RESYNC,
    });
    second.server.notifyToolsListChanged();
    const next = (await subscription.next()).value;
    expect(next?.method).toBe("notifications/tools/list_changed");
    expect(next?.params?._meta).not.toHaveProperty(["mcp-mount/resync"]);
    await client.close();
  });

  it("should throw once reconnection gives up", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    const subscription = client.listen(
      { toolsListChanged: true },
      { reconnect: { ...fast, maxAttempts: 2 } },
    );
    await subscription.acknowledged;
    await ours.close();
    await expect(subscription.next()).rejects.toThrow("Gave up reconnecting after 2 attempts");
    await client.close();
  });

  it("should end cleanly on the listen signal while it waits to reconnect", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    const controller = new AbortController();
    const subscription = client.listen(
      { toolsListChanged: true },
      { signal: controller.signal, reconnect: { initialDelayMs: 60_000 } },
    );
    await subscription.acknowledged;
    const done = subscription.next();
    for (const stream of ours.listenStreams) stream.destroy();
    // Time to notice the cut and start its 60 s wait; the client shows no sign of that moment.
    await sleep(50);
    controller.abort();
    expect(await done).toEqual({ value: undefined, done: true });
    await client.close();
  });

  it("should end cleanly when the consumer breaks out", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    const subscription = client.listen({ toolsListChanged: true }, { reconnect: fast });
    await subscription.acknowledged;
    for (const stream of ours.listenStreams) stream.destroy();
    for await (const notification of subscription) {
      expect(notification.params).toEqual(RESYNC);
      break;
    }
    expect(await subscription.next()).toEqual({ value: undefined, done: true });
    await expect.poll(() => ours.listenStreams.size).toBe(0);
    await client.close();
  });

  it("should fail the iteration on a drop with reconnect: false", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    const subscription = client.listen({ toolsListChanged: true }, { reconnect: false });
    await subscription.acknowledged;
    const failed = subscription.next();
    for (const stream of ours.listenStreams) stream.destroy();
    await expect(failed).rejects.toThrow();
    await client.close();
  });

  it("should refuse a bad reconnect option", async () => {
    const ours = await start();
    const client = await McpClient.connect(ours.url, { era: "modern", eraCache: false });
    expect(() =>
      client.listen({ toolsListChanged: true }, { reconnect: { maxAttempts: -1 } }),
    ).toThrow(RangeError);
    await client.close();
  });
});

describe("McpClient listen, legacy era, when the GET stream drops", () => {
  it("should keep iterating across drops, resumed with Last-Event-ID", async () => {
    const ours = await startWatchedServer();
    const client = await McpClient.connect(ours.url, {
      era: "legacy",
      eraCache: false,
      reconnectDelayMs: 20,
    });
    const subscription = client.listen({ toolsListChanged: true });
    await subscription.acknowledged;
    for (const round of [1, 2]) {
      await expect.poll(() => ours.getStreams.size).toBe(1);
      for (const stream of ours.getStreams) stream.destroy();
      ours.server.tool({ name: `added_${round}` }, () => "x");
      expect((await subscription.next()).value?.method).toBe("notifications/tools/list_changed");
    }
    const resumed = ours.requests.filter((r) => r.method === "GET" && r.lastEventId);
    expect(resumed.length).toBeGreaterThanOrEqual(2);
    await client.close();
    expect(await subscription.next()).toEqual({ value: undefined, done: true });
    await ours.close();
  });
});
