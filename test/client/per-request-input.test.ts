import { resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type InputContext,
  type InputHandlers,
  McpClient,
  type McpClientOptions,
} from "../../src/client/index.js";
import { stdio } from "../../src/client/stdio.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import { type OurServer, startOurServer } from "./servers.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** Input callbacks that answer as `who`, recording each question and its context. */
function answeringAs(who: string, asked: { message: unknown; context: InputContext }[] = []) {
  const handlers: InputHandlers = {
    elicitation: (params, context) => {
      asked.push({ message: params.message, context });
      return { action: "accept", content: { ok: true, who } };
    },
    sampling: () => ({ role: "assistant", content: { type: "text", text: who }, model: "m" }),
    roots: () => [{ uri: `file:///${who}`, name: who }],
  };
  return { handlers, asked };
}

const ALL_INPUT: JsonObject = { elicitation: { form: {} }, sampling: {}, roots: {} };

describe.each(["modern", "legacy"] as const)("Per-request onInput over HTTP, %s era", (era) => {
  let ours: OurServer;
  const open: McpClient[] = [];

  beforeAll(async () => {
    ours = await startOurServer("node", { legacy: true });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });
  afterAll(() => ours.close());

  async function connect(options: McpClientOptions = {}) {
    const client = await McpClient.connect(ours.url, { ...ours.reach, era, ...options });
    expect(client.era).toBe(era);
    open.push(client);
    return client;
  }

  it("should answer a request's input with its own callbacks, and others' with the client's", async () => {
    const client = await connect({ onInput: answeringAs("client").handlers });
    const own = answeringAs("own");
    const mine = await client.callTool("confirm", { item: "a" }, { onInput: own.handlers });
    expect(mine.structuredContent).toMatchObject({ content: { ok: true, who: "own" } });
    expect(own.asked).toEqual([
      { message: "Delete a?", context: expect.objectContaining({ method: "tools/call" }) },
    ]);
    const theirs = await client.callTool("confirm", { item: "b" });
    expect(theirs.structuredContent).toMatchObject({ content: { ok: true, who: "client" } });
  });

  it("should keep the input of concurrent requests apart", async () => {
    const client = await connect({ onInput: answeringAs("client").handlers });
    const [a, b] = [answeringAs("a"), answeringAs("b")];
    const [resultA, resultB] = await Promise.all([
      client.callTool("confirm", { item: "a" }, { onInput: a.handlers }),
      client.callTool("confirm", { item: "b" }, { onInput: b.handlers }),
    ]);
    expect(resultA.structuredContent).toMatchObject({ content: { who: "a" } });
    expect(resultB.structuredContent).toMatchObject({ content: { who: "b" } });
    expect(a.asked.map((q) => q.message)).toEqual(["Delete a?"]);
    expect(b.asked.map((q) => q.message)).toEqual(["Delete b?"]);
  });

  it("should let a client without callbacks of its own declare capabilities and answer per request", async () => {
    const client = await connect({ capabilities: ALL_INPUT });
    const own = answeringAs("own").handlers;
    expect((await client.callTool("two_steps", {}, { onInput: own })).structuredContent).toEqual({
      first: { ok: true, who: "own" },
      second: { type: "text", text: "own" },
    });
    expect((await client.callTool("both_at_once", {}, { onInput: own })).structuredContent).toEqual(
      { name: "accept", roots: [{ uri: "file:///own", name: "own" }] },
    );
  });
});

describe("Per-request onInput over stdio, legacy era", () => {
  const open: McpClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });

  async function connect() {
    const wire = stdio({
      command: process.execPath,
      args: ["--import", "tsx", "test/client/fixtures/stdio-server.ts"],
      cwd: ROOT,
    });
    const client = await McpClient.connect(wire, {
      era: "legacy",
      onInput: answeringAs("client").handlers,
    });
    expect(client.era).toBe("legacy");
    open.push(client);
    return client;
  }

  it("should answer a server request with the one in-flight request's own callbacks", async () => {
    const client = await connect();
    const own = answeringAs("own");
    const result = await client.callTool("confirm", { item: "a" }, { onInput: own.handlers });
    expect(result.structuredContent).toMatchObject({ content: { who: "own" } });
    // Nothing on a pipe names the request, so the context is the one in-flight request's.
    expect(own.asked).toEqual([
      {
        message: "Delete a?",
        context: expect.objectContaining({ method: "tools/call", name: "confirm" }),
      },
    ]);
  });

  it("should answer with the client's callbacks while several requests bring their own", async () => {
    const client = await connect();
    const [a, b] = [answeringAs("a"), answeringAs("b")];
    const results = await Promise.all([
      client.callTool("confirm", { item: "a" }, { onInput: a.handlers }),
      client.callTool("confirm", { item: "b" }, { onInput: b.handlers }),
    ]);
    for (const result of results) {
      expect(result.structuredContent).toMatchObject({ content: { who: "client" } });
    }
    expect([...a.asked, ...b.asked]).toEqual([]);
  });
});
