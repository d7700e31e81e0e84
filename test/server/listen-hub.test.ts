// A change the bus delivers twice (a Redis Cluster's subscriber moving between nodes can) reaches
// each stream once: every change carries an id, and a hub drops one it has heard already.
import { describe, expect, it } from "vitest";
import { createMcpHandler, McpServer, memoryStore } from "../../src/index.js";
import { modernHeaders, modernMeta } from "../helpers/modern.js";
import { assertModernMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { mount } from "../helpers/transports.js";

describe("ListenHub", () => {
  it("should deliver a change heard twice on the bus once, and the next change too", async () => {
    const store = memoryStore();
    const server = new McpServer({ name: "hub", version: "1.0.0" });
    const mcp = createMcpHandler(server, { store });
    const mounted = await mount("node", mcp);
    try {
      const response = await fetch(mounted.url, {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "l",
          method: "subscriptions/listen",
          params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
        }),
      });
      const reader = new SseReader(response.body!);
      assertModernMessage(await reader.next(), "subscriptions/listen");
      const twice = { kind: "tools", eid: "change-1" };
      await store.bus.publish("changes", twice);
      await store.bus.publish("changes", twice);
      const first = await reader.next();
      assertModernMessage(first, "subscriptions/listen");
      expect(first?.method).toBe("notifications/tools/list_changed");
      server.notifyToolsListChanged();
      expect((await reader.next())?.method).toBe("notifications/tools/list_changed");
      // Nothing more: the repeat was dropped.
      expect(await reader.next(300)).toBeUndefined();
      await reader.cancel();
    } finally {
      await mounted.close();
      await mcp.close();
    }
  });
});
