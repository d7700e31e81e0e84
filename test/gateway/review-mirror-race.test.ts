import { afterEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { proxyServer } from "../../src/gateway/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { mount } from "../helpers/transports.js";

// The upstream changes its tools just after the gateway read them, before it listens for
// changes (as a restarted child may, right away): the gateway must hear of that change and
// list the new tool, not keep the list it read for ever.

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const open of opened.splice(0).reverse()) await open.close();
});

describe("a gateway whose upstream changes its list as the gateway reads it", () => {
  it.each(["modern", "legacy"] as const)("should list the change (%s upstream)", async (era) => {
    const upstream = new McpServer({ name: "upstream", version: "1.0.0" });
    upstream.tool({ name: "first" }, () => "first");
    const upstreamMount = await mount("node", createMcpHandler(upstream));
    opened.push(upstreamMount);
    let changed = false;
    // The gateway's client: once the first tools/list answer is in, the upstream adds a tool.
    const fetchThen: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const body = typeof init?.body === "string" ? init.body : "";
      if (!changed && body.includes('"tools/list"')) {
        const text = await response.text();
        changed = true;
        upstream.tool({ name: "second" }, () => "second");
        return new Response(text, { status: response.status, headers: response.headers });
      }
      return response;
    };
    const upstreamClient = await McpClient.connect(upstreamMount.url, {
      era,
      fetch: fetchThen,
      cache: false,
    });
    opened.push(upstreamClient);
    const gateway = await proxyServer(upstreamClient, { onError: () => {} });
    expect(changed).toBe(true);
    await expect.poll(() => [...gateway.tools.keys()].sort()).toEqual(["first", "second"]);
  });
});
