import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { proxyServer, stdioUpstream, type Upstream } from "../../src/gateway/index.js";
import { createMcpHandler } from "../../src/index.js";
import { GATEWAY_UPSTREAM_SCRIPT } from "../helpers/gateway-upstream-server.js";
import { type Mounted, mount } from "../helpers/transports.js";

const ROOT = resolve(import.meta.dirname, "../..");

// A gateway over a scoped stdio upstream (a child per legacy session, the process's own for
// modern requests): the process child it mirrors dies and is restarted; the mirror must follow
// the new child, or the upstream's later list changes are never heard.

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const open of opened.splice(0).reverse()) await open.close();
});

describe("a gateway over a scoped upstream whose process child restarts", () => {
  it("should mirror the restarted child's list changes", async () => {
    const upstream: Upstream = stdioUpstream({
      command: process.execPath,
      args: ["--import", "tsx", GATEWAY_UPSTREAM_SCRIPT],
      cwd: ROOT,
      scope: "session",
      restart: { initialMs: 10 },
      onStderr: () => {},
      onRestart: () => {},
      closeTimeoutMs: 1_000,
    });
    opened.push({ close: () => upstream.close(0) });
    const gateway = await proxyServer(upstream, { onError: () => {} });
    const mounted: Mounted = await mount("node", createMcpHandler(gateway));
    opened.push(mounted);
    // A modern client has no session: its calls go to the process child the mirror follows.
    const client = await McpClient.connect(mounted.url, { era: "modern", cache: false });
    opened.push(client);
    const first = Number((await client.callTool("pid")).structuredContent?.pid);
    await client.callTool("crash").catch(() => {});
    await expect
      .poll(async () => {
        const result = await client.callTool("pid").catch(() => undefined);
        return Number(result?.structuredContent?.pid ?? first);
      })
      .not.toBe(first);
    // The restarted child adds a tool and announces it: the gateway lists it.
    await client.callTool("add_tool");
    await expect
      .poll(async () => (await client.tools()).map((tool) => tool.name), { timeout: 5_000 })
      .toContain("added");
  });
});
