import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { type GatewayProcess, startGateway } from "../helpers/gateway-process.js";

// Cancellation and list changes through a gateway process and its stdio child: a client that
// gives up on a call ends the upstream call too (the child's tool sees its signal abort), in
// both eras, and the child's stderr reaches the gateway's log line by line; a tool the child
// adds is announced to listening clients of both eras and listed.

/** Generous waits: these suites share a loaded machine with every other suite. */
const WAIT = { timeout: 10_000 };

let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGateway({ kind: "script", upstream: "test" });
});
afterAll(async () => {
  await gateway?.stop();
});

describe.each(["modern", "legacy"] as const)("a call cancelled by our client (%s)", (era) => {
  it("should be cancelled in the upstream child", async () => {
    const client = await McpClient.connect(gateway.url, { era });
    const controller = new AbortController();
    const tag = `${era}-${Date.now()}`;
    const pending = client.callTool("hang", { tag }, { signal: controller.signal });
    const settled = pending.catch((error: unknown) => error);
    await expect.poll(() => gateway.output(), WAIT).toContain(`[upstream] started:${tag}\n`);
    expect(gateway.output()).not.toContain(`cancelled:${tag}`);
    controller.abort();
    expect(await settled).toBeInstanceOf(Error);
    await expect.poll(() => gateway.output(), WAIT).toContain(`[upstream] cancelled:${tag}\n`);
    // The gateway still serves the next call.
    expect((await client.callTool("echo", { text: "after" })).content).toEqual([
      { type: "text", text: "after" },
    ]);
    await client.close();
  });
});

describe("a tool the upstream child adds", () => {
  it("should be announced to a modern and a legacy listener, and listed", async () => {
    const clients = await Promise.all(
      (["modern", "legacy"] as const).map((era) => McpClient.connect(gateway.url, { era })),
    );
    const streams = clients.map((client) => client.listen({ toolsListChanged: true }));
    for (const stream of streams) await stream.acknowledged;
    const before = (await clients[0]!.tools()).map((tool) => tool.serverName);
    expect(before).not.toContain("added");
    await clients[0]!.callTool("add_tool", {});
    for (const stream of streams) {
      const change = await stream.next();
      expect(change.value).toMatchObject({ method: "notifications/tools/list_changed" });
      stream.close();
    }
    for (const client of clients) {
      const names = (await client.tools({ fresh: true })).map((tool) => tool.serverName);
      expect(names).toContain("added");
      expect((await client.callTool("added", {})).content).toEqual([
        { type: "text", text: "added" },
      ]);
      await client.close();
    }
  });
});
