import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "../../src/adapters/node.js";
import { McpClient } from "../../src/client/index.js";
import { type InputBridge, inputBridge } from "../../src/gateway/input-bridge.js";
import { createMcpHandler, type McpHandler, McpServer } from "../../src/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import type { McpStore } from "../../src/store/types.js";

/** What the upstream's tools let a test see and steer. */
export interface UpstreamProbe {
  /**
   * Items whose `confirm` call was cancelled while it waited for its answer (legacy only), and
   * "slow" for each `slow_confirm` cancelled after its answer.
   */
  cancelled: string[];
  /** Answers `slow_confirm` received, before it waits on `release`. */
  answered: JsonObject[];
  /** Lets the `slow_confirm` calls waiting after their answer finish. */
  release(): void;
}

const FORM = { type: "object", properties: { ok: { type: "boolean" } } };

/** A probe whose `release` opens the gate `slow_confirm` waits at. */
export function upstreamProbe(): UpstreamProbe & { gate: Promise<void> } {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { cancelled: [], answered: [], release, gate };
}

/** The upstream: tools that ask the client for input in the middle of a call. */
export function upstreamServer(probe: UpstreamProbe & { gate: Promise<void> }): McpServer {
  const server = new McpServer({ name: "upstream", version: "1.0.0" });
  const item = { type: "object", properties: { item: { type: "string" } } };
  server.tool({ name: "confirm", input: item }, async ({ item }, ctx) => {
    try {
      const answer = await ctx.elicit("confirm", {
        mode: "form",
        message: `Delete ${String(item)}?`,
        requestedSchema: FORM,
      });
      return { action: answer.action, content: answer.content };
    } catch (error) {
      probe.cancelled.push(String(item));
      throw error;
    }
  });
  server.tool({ name: "two_questions" }, async (_args, ctx) => {
    const first = await ctx.elicit("first", {
      mode: "form",
      message: "First?",
      requestedSchema: FORM,
    });
    const second = await ctx.sample("second", {
      messages: [{ role: "user", content: { type: "text", text: "Second?" } }],
      maxTokens: 5,
    });
    return { first: first.content, second: second.content };
  });
  server.tool({ name: "slow_confirm" }, async (_args, ctx) => {
    const answer = await ctx.elicit("confirm", {
      mode: "form",
      message: "Sure?",
      requestedSchema: FORM,
    });
    probe.answered.push(answer);
    await new Promise<void>((resolve, reject) => {
      void probe.gate.then(resolve);
      ctx.signal.addEventListener("abort", () => {
        probe.cancelled.push("slow");
        reject(ctx.signal.reason);
      });
    });
    return { action: answer.action };
  });
  return server;
}

/** A handler on a real loopback socket. */
export async function serve(mcp: McpHandler): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(toNodeHandler(mcp));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return {
    url,
    async close() {
      await mcp.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** One gateway process: its upstream client, its bridge, its endpoint. */
export interface BridgeGateway {
  url: string;
  bridge: InputBridge;
  processId: string;
  close(): Promise<void>;
}

/** Options of {@link startBridgeGateway}. */
export interface BridgeGatewayOptions {
  store: McpStore;
  upstreamUrl: string;
  upstreamEra: "modern" | "legacy";
  inputTimeoutMs?: number;
  /** Receives the bridge's errors, which a test expects to be none. */
  errors: unknown[];
}

/**
 * A gateway by hand: each upstream tool proxied by a tool whose handler runs the upstream call
 * through an input bridge on `store`, mounted with the same store (both eras).
 */
export async function startBridgeGateway(options: BridgeGatewayOptions): Promise<BridgeGateway> {
  const client = await McpClient.connect(options.upstreamUrl, {
    era: options.upstreamEra,
    eraCache: false,
    // The gateway forwards every kind of input, so it declares each upstream.
    capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
  });
  const processId = crypto.randomUUID();
  const bridge = inputBridge({
    store: options.store,
    processId,
    inputTimeoutMs: options.inputTimeoutMs ?? 60_000,
    onError: (error) => options.errors.push(error),
  });
  const server = new McpServer({ name: "gateway", version: "1.0.0" });
  for (const tool of await client.tools()) {
    server.tool({ name: tool.serverName, input: { type: "object" } }, (args, ctx) =>
      bridge.run(ctx, (onInput, signal) =>
        client.callTool(tool.serverName, args, { onInput, signal }),
      ),
    );
  }
  const mcp = createMcpHandler(server, {
    store: options.store,
    secret: "input-bridge-tests",
    legacy: true,
  });
  const endpoint = await serve(mcp);
  return {
    url: endpoint.url,
    bridge,
    processId,
    async close() {
      await endpoint.close();
      await bridge.close();
      await client.close();
    },
  };
}
