import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient, type McpClientOptions, type Notification } from "../../src/client/index.js";
import { nodeFetch } from "../../src/client/node.js";
import { callAndAbortOnProgress, startWatchedServer, type WatchedServer } from "./servers.js";

const onInput: McpClientOptions["onInput"] = {
  elicitation: (params) => ({ action: "accept", content: { ok: true, asked: params.message } }),
  sampling: () => ({ role: "assistant", content: { type: "text", text: "sampled" }, model: "m" }),
  roots: () => [{ uri: "file:///work", name: "work" }],
};

describe.each([
  ["Node's fetch", undefined],
  ["nodeFetch", nodeFetch()],
] as const)(
  "McpClient, legacy era, against our server, sending through %s",
  (_name, clientFetch) => {
    let ours: WatchedServer;

    beforeAll(async () => {
      ours = await startWatchedServer({ legacy: { retryMs: 50 } });
    });
    afterAll(() => ours.close());

    const connect = (options: McpClientOptions = {}) =>
      McpClient.connect(ours.url, {
        ...ours.reach,
        ...(clientFetch && { fetch: clientFetch }),
        era: "legacy",
        onInput,
        ...options,
      });

    it("should initialize a session and send its id and version on every request", async () => {
      const client = await connect();
      expect(client.era).toBe("legacy");
      expect(client.protocolVersion).toBe("2025-11-25");
      expect(client.server.serverInfo).toMatchObject({ name: "fixture" });
      expect(client.server.instructions).toBe("Fixture server for tests");
      const before = ours.requests.length;
      expect(await (await client.tool("echo"))!.call({ text: "hi" })).toEqual([
        { type: "text", text: "hi" },
      ]);
      const session = ours.requests.at(-1)!.session;
      expect(session).toEqual(expect.any(String));
      expect(ours.requests.slice(before).every((r) => r.session === session)).toBe(true);
      await client.close();
    });

    it("should answer server requests (elicitation, sampling, roots) through onInput", async () => {
      const client = await connect();
      expect((await client.callTool("confirm", { item: "a" })).structuredContent).toEqual({
        action: "accept",
        content: { ok: true, asked: "Delete a?" },
        rounds: 1,
      });
      expect((await client.callTool("two_steps")).structuredContent).toEqual({
        first: { ok: true, asked: "First?" },
        second: { type: "text", text: "sampled" },
      });
      expect((await client.callTool("both_at_once")).structuredContent).toEqual({
        name: "accept",
        roots: [{ uri: "file:///work", name: "work" }],
      });
      await client.close();
    });

    it("should tell the callback which request a server request came with", async () => {
      const contexts: unknown[] = [];
      const client = await connect({
        onInput: {
          elicitation: (_params, context) => {
            contexts.push({ method: context.method, name: context.name });
            return { action: "decline" };
          },
        },
      });
      await client.callTool("confirm", { item: "a" });
      expect(contexts).toEqual([{ method: "tools/call", name: "confirm" }]);
      await client.close();
    });

    it("should route progress and log messages, with logging/setLevel for the session", async () => {
      const logs: unknown[] = [];
      const client = await connect({ logLevel: "warning", onLog: (m) => logs.push(m) });
      const progress: number[] = [];
      await client.callTool("steps", {}, { onProgress: (p) => progress.push(p.progress) });
      expect(progress).toEqual([1, 2]);
      expect(logs).toEqual([expect.objectContaining({ level: "warning", data: "careful" })]);
      await client.close();
    });

    it("should change the session's log level, and tell the server its roots changed", async () => {
      const logs: { level: string }[] = [];
      const client = await connect({ onLog: (m) => logs.push(m) });
      await client.setLogLevel("warning");
      await client.callTool("steps");
      expect(logs.map((m) => m.level)).toEqual(["warning"]);
      logs.length = 0;
      await client.setLogLevel("debug");
      await client.callTool("steps");
      expect(logs.map((m) => m.level)).toEqual(["debug", "warning"]);
      await client.rootsChanged();
      await client.close();
    });

    it("should cancel with notifications/cancelled when the signal aborts", async () => {
      const client = await connect();
      await expect(callAndAbortOnProgress(client, "slow", "stop")).rejects.toThrow("stop");
      await client.close();
    });

    it("should resume a POST stream the server closed early, with Last-Event-ID", async () => {
      const logs: unknown[] = [];
      const client = await connect({
        logLevel: "info",
        reconnectDelayMs: 20,
        onLog: (m) => logs.push(m),
      });
      const result = await client.callTool("detach");
      expect(result.content).toEqual([{ type: "text", text: "answered after the stream closed" }]);
      expect(logs).toEqual([expect.objectContaining({ data: "while detached" })]);
      const resumed = ours.requests.filter((r) => r.method === "GET" && r.lastEventId);
      expect(resumed.length).toBeGreaterThan(0);
      await client.close();
    });

    it("should resume a dropped GET stream with Last-Event-ID and receive what it missed", async () => {
      const client = await connect({ reconnectDelayMs: 20 });
      const received: Notification[] = [];
      const subscription = client.listen({ toolsListChanged: true, promptsListChanged: true });
      await subscription.acknowledged;
      await expect.poll(() => ours.getStreams.size).toBe(1);
      ours.server.notifyPromptsListChanged();
      const first = await subscription.next();
      received.push(first.value!);
      for (const stream of ours.getStreams) stream.destroy();
      // Published while no stream is open: only a replay can bring it.
      ours.server.tool({ name: "added_while_away" }, () => "x");
      const second = await subscription.next();
      received.push(second.value!);
      expect(received.map((n) => n.method)).toEqual([
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
      ]);
      const gets = ours.requests.filter((r) => r.method === "GET");
      expect(gets.at(-1)!.lastEventId).toEqual(expect.any(String));
      subscription.close();
      await client.close();
    });

    it("should end the session with DELETE on close, and open a new one after a 404", async () => {
      const client = await connect({ reconnectDelayMs: 20 });
      await client.tools();
      const session = ours.requests.at(-1)!.session!;
      await fetch(ours.url, { method: "DELETE", headers: { "mcp-session-id": session } });
      // The session is gone: the client initializes again and retries.
      expect(await (await client.tool("echo"))!.call({ text: "again" })).toEqual([
        { type: "text", text: "again" },
      ]);
      const renewed = ours.requests.at(-1)!.session!;
      expect(renewed).not.toBe(session);
      // The new session gets its GET stream too.
      await expect
        .poll(() => ours.requests.some((r) => r.method === "GET" && r.session === renewed))
        .toBe(true);
      await client.close();
      expect(ours.requests.at(-1)).toMatchObject({ method: "DELETE", session: renewed });
    });

    it("should work with a stateless legacy server (no session id)", async () => {
      const stateless = await startWatchedServer({ legacy: { stateless: true } });
      const client = await McpClient.connect(stateless.url, { era: "legacy", eraCache: false });
      expect(client.era).toBe("legacy");
      expect((await client.callTool("echo", { text: "s" })).content).toEqual([
        { type: "text", text: "s" },
      ]);
      await client.close();
      await stateless.close();
    });
  },
);
