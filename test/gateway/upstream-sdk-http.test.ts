import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { toNodeHandler } from "../../src/adapters/node.js";
import { McpClient } from "../../src/client/index.js";
import type { Upstream, UpstreamKey } from "../../src/gateway/types.js";
import { InProcessWire, type SdkServer } from "../../src/gateway/upstream/in-process-wire.js";
import {
  clientUpstream,
  httpUpstream,
  isRetryable,
  sdkUpstream,
  type UpstreamRestart,
} from "../../src/gateway/upstream/index.js";
import { createMcpHandler, type McpHandler } from "../../src/index.js";
import { createGatewayUpstreamServer } from "../helpers/gateway-upstream-server.js";

const open: Upstream[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((upstream) => upstream.close(0)));
});

function kept<T extends Upstream>(upstream: T): T {
  open.push(upstream);
  return upstream;
}

async function callText(upstream: Upstream, name: string, args = {}, key: UpstreamKey = {}) {
  const lease = await upstream.acquire(key);
  try {
    const result = await lease.client.callTool(name, args);
    return (result.content[0] as { text?: string } | undefined)?.text;
  } finally {
    lease.release();
  }
}

/** An official SDK v1 McpServer: a tool that answers, one that never does, and a counter. */
function sdkServer(id = "one"): SdkMcpServer {
  const sdk = new SdkMcpServer({ name: "sdk-v1", version: "1.0.0" });
  sdk.registerTool("greet", { inputSchema: { who: z.string() } }, async ({ who }) => ({
    content: [{ type: "text", text: `hello ${who} from ${id}` }],
  }));
  sdk.registerTool("hang", {}, () => new Promise(() => {}));
  sdk.registerTool("confirm", {}, async () => {
    const answer = await sdk.server.elicitInput({
      message: "Sure?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    });
    return { content: [{ type: "text", text: answer.action }] };
  });
  return sdk;
}

describe("sdkUpstream", () => {
  it("should call an SDK v1 McpServer in this process through our client", async () => {
    const connected: McpClient[] = [];
    const upstream = kept(sdkUpstream(sdkServer()));
    upstream.onConnect((client) => connected.push(client));
    expect(await callText(upstream, "greet", { who: "ada" })).toBe("hello ada from one");
    expect(connected).toHaveLength(1);
    expect(connected[0]?.era).toBe("legacy");
    expect(connected[0]?.server.serverInfo).toMatchObject({ name: "sdk-v1" });
  });

  it("should declare elicitation upstream, answered by the call's own onInput", async () => {
    const upstream = kept(sdkUpstream(sdkServer()));
    const lease = await upstream.acquire({});
    try {
      const elicitation = () => ({ action: "accept", content: { ok: true } });
      const answered = await lease.client.callTool("confirm", {}, { onInput: { elicitation } });
      expect(answered.content).toEqual([{ type: "text", text: "accept" }]);
      // A request no call's onInput answers gets the placeholder's error.
      const unanswered = await lease.client.callTool("confirm");
      expect(unanswered.isError).toBe(true);
      expect(JSON.stringify(unanswered.content)).toContain("no client to ask");
    } finally {
      lease.release();
    }
  });

  it("should fail a call in flight retryable when the SDK server closes, then connect it again", async () => {
    const restarts: UpstreamRestart[] = [];
    const sdk = sdkServer();
    const upstream = kept(
      sdkUpstream(sdk, { restart: { initialMs: 10 }, onRestart: (e) => restarts.push(e) }),
    );
    const connected: McpClient[] = [];
    upstream.onConnect((client) => connected.push(client));
    const hanging = callText(upstream, "hang").catch((caught: unknown) => caught);
    await expect.poll(() => connected.length).toBe(1);
    await sdk.close();
    const error = await hanging;
    expect(isRetryable(error)).toBe(true);
    expect(error).toMatchObject({ message: 'The upstream "sdk-server" closed the connection' });
    expect(restarts).toMatchObject([{ attempt: 1, delayMs: 10 }]);
    expect(await callText(upstream, "greet", { who: "bo" })).toBe("hello bo from one");
    expect(connected).toHaveLength(2);
  });

  it("should make one server per session from a factory, and refuse a scope for a lone object", async () => {
    let made = 0;
    const upstream = kept(sdkUpstream(() => sdkServer(`s${++made}`), { scope: "session" }));
    expect(await callText(upstream, "greet", { who: "a" }, { sessionId: "a" })).toBe(
      "hello a from s1",
    );
    expect(await callText(upstream, "greet", { who: "b" }, { sessionId: "b" })).toBe(
      "hello b from s2",
    );
    expect(await callText(upstream, "greet", { who: "a" }, { sessionId: "a" })).toBe(
      "hello a from s1",
    );
    expect(() => sdkUpstream(sdkServer(), { scope: "session" })).toThrow(/factory/);
  });
});

/** Our own server over node:http on a port of the loopback, which can be stopped and started. */
class HttpServer {
  port = 0;
  #server: Server | undefined;
  #mcp: McpHandler | undefined;

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(): Promise<void> {
    this.#mcp = createMcpHandler(createGatewayUpstreamServer(), { secret: "upstream-http" });
    const server = createServer(toNodeHandler(this.#mcp));
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await this.#mcp?.close();
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

describe("httpUpstream", () => {
  const servers: HttpServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it.each(["modern", "legacy"] as const)(
    "should fail retryable while a %s server is down, and serve again once it is back",
    async (era) => {
      const server = new HttpServer();
      servers.push(server);
      await server.start();
      const restarts: UpstreamRestart[] = [];
      const connected: McpClient[] = [];
      const upstream = kept(
        httpUpstream(server.url, {
          clientOptions: { era },
          restart: { initialMs: 10, maxMs: 50 },
          onRestart: (event) => restarts.push(event),
        }),
      );
      upstream.onConnect((client) => connected.push(client));
      expect(await callText(upstream, "echo", { text: "up" })).toBe("up");
      expect(connected[0]?.era).toBe(era);
      await server.stop();
      const error = await callText(upstream, "echo", { text: "down" }).catch((e: unknown) => e);
      expect(isRetryable(error)).toBe(true);
      expect(error).toMatchObject({ message: expect.stringContaining("is unreachable") });
      await server.start();
      await expect
        .poll(() => callText(upstream, "echo", { text: "back" }).catch(() => "refused"))
        .toBe("back");
      expect(restarts.length).toBeGreaterThan(0);
      expect(connected.length).toBeGreaterThan(1);
    },
  );
});

describe("clientUpstream", () => {
  it("should lend the client it was given, and close it once the calls in flight are done", async () => {
    const client = await McpClient.connect(sdkUpstreamWire());
    const upstream = clientUpstream(client);
    const heard: McpClient[] = [];
    upstream.onConnect((connected) => heard.push(connected));
    expect(heard).toEqual([client]);
    const lease = await upstream.acquire({ sessionId: "any" });
    expect(lease.client).toBe(client);
    const closed = upstream.close(30_000);
    expect(isRetryable(await upstream.acquire({}).catch((caught: unknown) => caught))).toBe(true);
    // Still open while the lease is out.
    expect((await client.callTool("greet", { who: "zoe" })).isError).toBeFalsy();
    lease.release();
    await closed;
    await expect(client.callTool("greet", { who: "zoe" })).rejects.toThrow(/closed/);
  });
});

/** A wire to an SDK server in this process, for a client made by hand. */
function sdkUpstreamWire(): InProcessWire {
  const wire = new InProcessWire('"by-hand"');
  const server: SdkServer = sdkServer();
  void server.connect(wire.transport);
  return wire;
}
