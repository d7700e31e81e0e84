import { PassThrough } from "node:stream";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { serveStdio } from "../../src/adapters/stdio.js";
import { McpClient, MessageWire } from "../../src/client/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { TestOtel } from "../helpers/otel.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

const otel = new TestOtel();

/**
 * Our stdio server on in-process pipes, both ends traced into the suite's SDK, and a client
 * speaking to it over a stdio wire (the same MessageWire `stdio()` spawns a child for).
 */
async function overPipes(era: "modern" | "legacy") {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const running = serveStdio(createFixtureServer(), {
    input: toServer,
    output: toClient,
    secret: "s",
    onError: () => {},
    telemetry: otel.providers,
  });
  const wire = new MessageWire("stdio", async (message) => {
    toServer.write(`${JSON.stringify(message)}\n`);
  });
  let buffer = "";
  toClient.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
      wire.receive(JSON.parse(buffer.slice(0, at)));
      buffer = buffer.slice(at + 1);
    }
  });
  const client = await McpClient.connect(wire, {
    era,
    telemetry: otel.providers,
    onInput: { elicitation: async () => ({ action: "accept", content: { ok: true } }) },
  });
  const close = async () => {
    await client.close();
    await running.close();
  };
  return { client, close };
}

/** The one ended span named `name` of `kind`. */
async function only(name: string, kind: SpanKind): Promise<ReadableSpan> {
  const matching = () => otel.named(name).filter((span) => span.kind === kind);
  await expect.poll(() => matching().length).toBe(1);
  return matching()[0]!;
}

// The stdio wire: network.transport pipe, no server address, the same parenting as on HTTP.
describe.each(["modern", "legacy"] as const)("McpClient CLIENT spans over stdio (%s)", (era) => {
  failOnUnhandled();
  afterEach(() => otel.reset());

  it("should parent the server's SERVER span, with network.transport pipe", async () => {
    const { client, close } = await overPipes(era);
    otel.reset();
    await client.callTool("echo", { text: "hi" });
    const sent = await only("tools/call echo", SpanKind.CLIENT);
    const served = await only("tools/call echo", SpanKind.SERVER);
    expect(served.spanContext().traceId).toBe(sent.spanContext().traceId);
    expect(served.parentSpanContext?.spanId).toBe(sent.spanContext().spanId);
    expect(sent.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "network.transport": "pipe",
      "mcp.protocol.version": client.protocolVersion,
    });
    for (const key of ["server.address", "server.port", "network.protocol.name", "mcp.session.id"])
      expect(sent.attributes[key]).toBeUndefined();
    expect(served.attributes["network.transport"]).toBe("pipe");
    await close();
  });

  it("should trace opening the session, the notification too", async () => {
    const { close } = await overPipes(era);
    const opening =
      era === "modern" ? ["server/discover"] : ["initialize", "notifications/initialized"];
    for (const method of opening) {
      const sent = await only(method, SpanKind.CLIENT);
      const served = await only(method, SpanKind.SERVER);
      expect(served.parentSpanContext?.spanId).toBe(sent.spanContext().spanId);
      expect(sent.attributes["jsonrpc.request.id"] === undefined).toBe(
        method.startsWith("notifications/"),
      );
    }
    if (era === "legacy") {
      // The version is known once initialize answered, not before.
      expect((await only("initialize", SpanKind.CLIENT)).attributes["mcp.protocol.version"]).toBe(
        undefined,
      );
      expect(
        (await only("notifications/initialized", SpanKind.CLIENT)).attributes[
          "mcp.protocol.version"
        ],
      ).toBe("2025-11-25");
    }
    await close();
  });

  it("should end an aborted request's span with the abort, and trace notifications/cancelled", async () => {
    const { client, close } = await overPipes(era);
    otel.reset();
    const aborting = new AbortController();
    // The tool reports progress once it runs: the request is in flight, then given up.
    const call = client.callTool(
      "slow",
      {},
      { signal: aborting.signal, onProgress: () => aborting.abort(new Error("user gave up")) },
    );
    await expect(call).rejects.toThrow();
    const sent = await only("tools/call slow", SpanKind.CLIENT);
    expect(sent.status.code).toBe(SpanStatusCode.ERROR);
    expect(sent.attributes["error.type"]).toEqual(expect.any(String));
    // The cancellation is traced under the request it cancels.
    const cancelled = await only("notifications/cancelled", SpanKind.CLIENT);
    expect(cancelled.attributes["mcp.method.name"]).toBe("notifications/cancelled");
    expect(cancelled.spanContext().traceId).toBe(sent.spanContext().traceId);
    expect(cancelled.parentSpanContext?.spanId).toBe(sent.spanContext().spanId);
    await close();
  });
});

// A legacy server's request over stdio is a SERVER span on the client, network.transport pipe.
describe("McpClient SERVER spans for the server's requests over stdio (legacy)", () => {
  failOnUnhandled();
  afterEach(() => otel.reset());

  it("should answer elicitation/create inside a SERVER span under the server's CLIENT span", async () => {
    const { client, close } = await overPipes("legacy");
    otel.reset();
    await client.callTool("confirm", { item: "file.txt" });
    const asked = await only("elicitation/create", SpanKind.CLIENT);
    const answered = await only("elicitation/create", SpanKind.SERVER);
    expect(answered.spanContext().traceId).toBe(asked.spanContext().traceId);
    expect(answered.parentSpanContext?.spanId).toBe(asked.spanContext().spanId);
    expect(answered.attributes).toMatchObject({
      "mcp.method.name": "elicitation/create",
      "network.transport": "pipe",
      "jsonrpc.request.id": asked.attributes["jsonrpc.request.id"],
      "mcp.protocol.version": client.protocolVersion,
    });
    await close();
  });
});
