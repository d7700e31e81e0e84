import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Cluster,
  openStream,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { modernHeaders, modernMeta, type Send, viaUrl } from "../helpers/modern.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import type { SseReader } from "../helpers/stream.js";

/** Generous waits: these suites share a loaded machine with every other suite. */
const WAIT_MS = 10_000;

async function next(reader: SseReader, method = "") {
  const message = await reader.next(WAIT_MS);
  if (message) assertLegacyMessage(message, method);
  return message;
}

describe.each<RedisTopology>(["standalone", "cluster"])(
  "legacy sessions across processes (Redis store, %s, round-robin proxy)",
  (topology) => {
    let cluster: Cluster;
    /** Sends through the proxy. */
    let proxy: Send;

    const post = (session: string, body: unknown) =>
      openStream(cluster.url, {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify(body),
      });
    const get = (session: string, lastEventId?: string, url = cluster.url) =>
      openStream(url, {
        method: "GET",
        headers: {
          ...legacyHeaders(session),
          accept: "text/event-stream",
          ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
        },
      });
    const tool = (
      session: string,
      name: string,
      args: Record<string, unknown> = {},
      send = proxy,
    ) => legacyCall(send, session, "tools/call", { name, arguments: args });
    /** The backends other than `index`. */
    const others = (index: number) => cluster.backends.filter((backend) => backend.index !== index);

    beforeAll(async () => {
      cluster = await startCluster({ processes: 3, topology });
      proxy = viaUrl(cluster.url);
    }, 90_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it("should serve a session opened on one process on every other, until it is deleted", async () => {
      const session = await openSession(proxy);
      const calls = await Promise.all(
        ["a", "b", "c"].map((text) => tool(session, "echo", { text })),
      );
      expect(calls.map((call) => call.result.content)).toEqual(
        ["a", "b", "c"].map((text) => [{ type: "text", text }]),
      );
      expect(new Set(calls.map(servedBy))).toEqual(new Set([0, 1, 2]));

      const level = await legacyCall(proxy, session, "logging/setLevel", { level: "warning" });
      for (let i = 0; i < 2; i++) {
        const steps = await tool(session, "steps");
        expect(servedBy(steps)).not.toBe(servedBy(level));
        const logs = steps.messages.filter((m) => m.method === "notifications/message");
        expect(logs.map((m) => (m.params as { level: string }).level)).toEqual(["warning"]);
      }

      const deleted = await proxy({ method: "DELETE", headers: legacyHeaders(session) });
      expect(deleted.status).toBe(200);
      const after = await Promise.all([0, 1, 2].map(() => legacyCall(proxy, session, "ping")));
      expect(after.map((ping) => ping.status)).toEqual([404, 404, 404]);
    });

    it("should resolve a server request with the client's answer posted to another process", async () => {
      const session = await openSession(proxy, { elicitation: {} });
      const call = await post(session, {
        jsonrpc: "2.0",
        id: "elicit-1",
        method: "tools/call",
        params: { name: "confirm", arguments: { item: "x" } },
      });
      const request = await next(call.reader, "tools/call");
      expect(request).toMatchObject({
        method: "elicitation/create",
        params: { message: "Delete x?" },
      });
      const answer = await proxy({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: request?.id,
          result: { action: "accept", content: { ok: true } },
        }),
      });
      expect(answer.status).toBe(202);
      expect(servedBy(answer)).not.toBe(servedBy(call.response));
      expect(await next(call.reader, "tools/call")).toMatchObject({
        id: "elicit-1",
        result: { structuredContent: { action: "accept", content: { ok: true }, rounds: 1 } },
      });
    });

    it("should abort a request on notifications/cancelled posted to another process", async () => {
      const session = await openSession(proxy);
      const call = await post(session, {
        jsonrpc: "2.0",
        id: "wait-1",
        method: "tools/call",
        params: { name: "wait_for_cancel", arguments: {} },
      });
      expect((await next(call.reader, "tools/call"))?.method).toBe("notifications/message");
      const cancelled = await proxy({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "wait-1", reason: "test" },
        }),
      });
      expect(cancelled.status).toBe(202);
      expect(servedBy(cancelled)).not.toBe(servedBy(call.response));
      // The tool waits 30 s unless aborted; its stream ends as soon as the abort arrives.
      const ended = await Promise.race([
        call.reader.done.then(() => true),
        new Promise((resolve) => setTimeout(() => resolve(false), WAIT_MS)),
      ]);
      expect(ended).toBe(true);
    });

    it("should deliver list changes and subscribed updates made anywhere to a GET stream held by one process", async () => {
      const session = await openSession(proxy);
      const stream = await get(session);
      expect(stream.response.status).toBe(200);
      const holder = servedBy(stream.response);
      const subscribed = await legacyCall(proxy, session, "resources/subscribe", {
        uri: "test://static",
      });
      expect(servedBy(subscribed)).not.toBe(holder);
      const [one, two] = others(holder).map((backend) => viaUrl(backend.url));
      await tool(session, "notify_resource_updated", { uri: "test://other" }, one);
      await tool(session, "notify_tools_changed", {}, two);
      await tool(session, "notify_resource_updated", { uri: "test://static" }, one);
      const received = [await next(stream.reader), await next(stream.reader)];
      expect(received).toEqual(
        expect.arrayContaining([
          { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
          {
            jsonrpc: "2.0",
            method: "notifications/resources/updated",
            params: { uri: "test://static" },
          },
        ]),
      );
      expect(await stream.reader.next(300)).toBeUndefined();

      const deleted = await proxy({ method: "DELETE", headers: legacyHeaders(session) });
      expect(servedBy(deleted)).not.toBe(holder);
      await stream.reader.done;
      expect(stream.reader.ended).toBe(true);
    });

    it("should resume a cut GET stream on another process with Last-Event-ID", async () => {
      const session = await openSession(proxy);
      await legacyCall(proxy, session, "resources/subscribe", { uri: "test://static" });
      const first = await get(session);
      const holder = cluster.backends[servedBy(first.response)]!;
      // A modern listen stream on the same process: once it hears a change, the GET stream's
      // process has logged it too. (On a Redis Cluster two changes published by different
      // processes may reach it in either order: it waits for both.)
      const witness = await openStream(holder.url, {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "witness",
          method: "subscriptions/listen",
          params: {
            notifications: { toolsListChanged: true, resourceSubscriptions: ["test://static"] },
            _meta: modernMeta(),
          },
        }),
      });
      expect((await witness.reader.next(WAIT_MS))?.method).toBe(
        "notifications/subscriptions/acknowledged",
      );
      try {
        await tool(session, "notify_tools_changed");
        expect(await next(first.reader)).toEqual({
          jsonrpc: "2.0",
          method: "notifications/tools/list_changed",
        });
        expect((await witness.reader.next(WAIT_MS))?.method).toBe(
          "notifications/tools/list_changed",
        );
        const lastEventId = first.reader.lastEventId!;
        expect(lastEventId).toBeTruthy();
        await first.reader.cancel();

        // Missed while disconnected: logged by the process that held the stream.
        await tool(session, "notify_resource_updated", { uri: "test://static" });
        await tool(session, "notify_tools_changed");
        const missed = ["notifications/resources/updated", "notifications/tools/list_changed"];
        const heard = [
          (await witness.reader.next(WAIT_MS))?.method,
          (await witness.reader.next(WAIT_MS))?.method,
        ];
        expect(heard.toSorted()).toEqual(missed);

        const resumed = await get(session, lastEventId, others(holder.index)[0]!.url);
        expect(resumed.response.status).toBe(200);
        const replayed = [await next(resumed.reader), await next(resumed.reader)];
        // One Redis orders the two publishes as they were made; a Cluster's nodes need not.
        if (topology === "standalone")
          expect(replayed.map((message) => message?.method)).toEqual(missed);
        expect(replayed.map((message) => message?.method).toSorted()).toEqual(missed);
        expect(replayed).toContainEqual({
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri: "test://static" },
        });
        // Live from here on, from the process that resumed it, and only once.
        await tool(session, "notify_tools_changed");
        expect((await next(resumed.reader))?.method).toBe("notifications/tools/list_changed");
        expect(await resumed.reader.next(300)).toBeUndefined();
        await proxy({ method: "DELETE", headers: legacyHeaders(session) });
        await resumed.reader.done;
      } finally {
        await witness.reader.cancel();
      }
    });

    it("should resume a cut POST response stream on another process, replayed then live", async () => {
      const session = await openSession(proxy);
      const call = await post(session, {
        jsonrpc: "2.0",
        id: "paced-1",
        method: "tools/call",
        params: { name: "paced", arguments: { n: 6, ms: 150 } },
      });
      expect(await next(call.reader, "tools/call")).toMatchObject({
        method: "notifications/message",
        params: { data: { tick: 1 } },
      });
      const lastEventId = call.reader.lastEventId!;
      await call.reader.cancel();
      const resumed = await get(session, lastEventId, others(servedBy(call.response))[0]!.url);
      expect(resumed.response.status).toBe(200);
      const ticks: unknown[] = [];
      for (;;) {
        const message = await next(resumed.reader, "tools/call");
        if (!message || "id" in message) {
          expect(message).toMatchObject({
            id: "paced-1",
            result: { content: [{ type: "text", text: "paced done" }] },
          });
          break;
        }
        ticks.push((message.params as { data: { tick: number } }).data.tick);
      }
      expect(ticks).toEqual([2, 3, 4, 5, 6]);
      await resumed.reader.done;
    });

    it("should go on live after resuming a GET stream on another process with nothing missed", async () => {
      const session = await openSession(proxy);
      const first = await get(session);
      const holder = servedBy(first.response);
      await tool(session, "notify_tools_changed");
      expect((await next(first.reader))?.method).toBe("notifications/tools/list_changed");
      const lastEventId = first.reader.lastEventId!;
      await first.reader.cancel();
      const resumed = await get(session, lastEventId, others(holder)[0]!.url);
      expect(resumed.response.status).toBe(200);
      await tool(session, "notify_tools_changed");
      expect((await next(resumed.reader))?.method).toBe("notifications/tools/list_changed");
      expect(await resumed.reader.next(300)).toBeUndefined();
      // Event ids go on from the one the client resumed from (the resumed stream's prime, then
      // the change); none is reused.
      const counter = (id: string | undefined) => Number(id?.slice(id.lastIndexOf(".") + 1));
      expect(counter(resumed.reader.lastEventId)).toBe(counter(lastEventId) + 2);
      await proxy({ method: "DELETE", headers: legacyHeaders(session) });
      await resumed.reader.done;
    });
  },
);
