import { describe, expect, it } from "vitest";
import { type StdioLine, stdioPipes } from "../helpers/stdio-pipes.js";

/** The fixture on stdio pipes, with shorthands for legacy requests and their answers. */
function pipes() {
  const io = stdioPipes();
  const request = (id: string, method: string, params: StdioLine = {}) =>
    io.send({ jsonrpc: "2.0", id, method, params });
  const answerOf = (id: string) => io.waitFor((line) => line.id === id && !("method" in line));
  const initialize = async (capabilities: StdioLine = {}) => {
    request("init", "initialize", {
      protocolVersion: "2025-06-18",
      capabilities,
      clientInfo: { name: "c", version: "1" },
    });
    await answerOf("init");
  };
  return { ...io, request, answerOf, initialize };
}

describe("serveStdio, legacy session", () => {
  it("should refuse session methods and calls before initialize", async () => {
    const io = pipes();
    io.request("p", "ping");
    expect(await io.answerOf("p")).toEqual({
      jsonrpc: "2.0",
      id: "p",
      error: { code: -32602, message: "Send initialize first, or _meta with a protocol version" },
    });
    io.input.end();
    await io.running.done;
  });

  it("should answer ping and refuse bad session method params with -32602", async () => {
    const io = pipes();
    await io.initialize();
    io.request("p", "ping");
    io.request("l", "logging/setLevel", { level: "loud" });
    io.request("u", "resources/subscribe", {});
    expect(await io.answerOf("p")).toEqual({ jsonrpc: "2.0", id: "p", result: {} });
    expect(await io.answerOf("l")).toMatchObject({
      error: { code: -32602, message: "Unknown log level: loud" },
    });
    expect(await io.answerOf("u")).toMatchObject({
      error: { code: -32602, message: "uri must be a string" },
    });
    io.input.end();
    await io.running.done;
  });

  it("should send only logs at or above the level set", async () => {
    const io = pipes();
    await io.initialize();
    io.request("l", "logging/setLevel", { level: "warning" });
    await io.answerOf("l");
    io.request("c", "tools/call", { name: "steps", arguments: {} });
    await io.answerOf("c");
    const logs = io.lines.filter((line) => line.method === "notifications/message");
    expect(logs.map((line) => (line.params as StdioLine).level)).toEqual(["warning"]);
    io.input.end();
    await io.running.done;
  });

  it("should deliver updates of subscribed resources only, and list changes", async () => {
    const io = pipes();
    await io.initialize();
    io.request("s", "resources/subscribe", { uri: "test://static" });
    await io.answerOf("s");
    io.server.notifyResourceUpdated("test://binary");
    io.server.notifyResourceUpdated("test://static");
    io.server.notifyToolsListChanged();
    await io.waitFor((line) => line.method === "notifications/tools/list_changed");
    const updated = io.lines.filter((line) => line.method === "notifications/resources/updated");
    expect(updated.map((line) => line.params)).toEqual([{ uri: "test://static" }]);
    io.request("u", "resources/unsubscribe", { uri: "test://static" });
    await io.answerOf("u");
    io.server.notifyResourceUpdated("test://static");
    io.server.notifyPromptsListChanged();
    await io.waitFor((line) => line.method === "notifications/prompts/list_changed");
    expect(
      io.lines.filter((line) => line.method === "notifications/resources/updated"),
    ).toHaveLength(1);
    io.input.end();
    await io.running.done;
  });

  it("should ask the client through a server request and use its answer, or its error", async () => {
    const io = pipes();
    await io.initialize({ elicitation: {} });
    io.request("c1", "tools/call", { name: "confirm", arguments: { item: "a" } });
    const asked = await io.waitFor((line) => line.method === "elicitation/create");
    expect(asked).toMatchObject({ id: "s1", params: { message: "Delete a?" } });
    io.send({ jsonrpc: "2.0", id: "s1", result: { action: "accept", content: { ok: true } } });
    expect(await io.answerOf("c1")).toMatchObject({
      result: { structuredContent: { action: "accept", content: { ok: true } } },
    });
    io.request("c2", "tools/call", { name: "confirm", arguments: { item: "b" } });
    await io.waitFor((line) => line.id === "s2");
    io.send({ jsonrpc: "2.0", id: "s2", error: { code: -32601, message: "no elicitation here" } });
    expect(JSON.stringify(await io.answerOf("c2"))).toContain("no elicitation here");
    io.input.end();
    await io.running.done;
  });

  it("should close at once when stdin ends while a request waits for the client", async () => {
    const io = pipes();
    await io.initialize({ elicitation: {} });
    io.request("c", "tools/call", { name: "confirm", arguments: { item: "a" } });
    await io.waitFor((line) => line.method === "elicitation/create");
    const started = Date.now();
    io.input.end();
    await io.running.done;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(io.lines.some((line) => line.id === "c")).toBe(false);
  });
});
