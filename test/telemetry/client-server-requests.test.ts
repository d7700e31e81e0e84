import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { TestOtel } from "../helpers/otel.js";
import { type Mounted, mount } from "../helpers/transports.js";
import { failOnUnhandled } from "../helpers/unhandled.js";

/** The one ended span named `name` of `kind`. */
async function only(otel: TestOtel, name: string, kind: SpanKind): Promise<ReadableSpan> {
  const matching = () => otel.named(name).filter((span) => span.kind === kind);
  await expect.poll(() => matching().length).toBe(1);
  return matching()[0]!;
}

/** Asserts `child` is a child of `parent`, in its trace. */
function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

// A legacy server's requests to the client (elicitation, sampling, roots): the client is their
// receiver, so each is a SERVER span on the client's side (conventions: mcp.server span, "or by
// the MCP client when it receives a server-initiated request"), the child of the server's CLIENT
// span that sent it, and counted in the client's mcp.server.operation.duration.
describe("McpClient SERVER spans for the server's requests (legacy, HTTP)", () => {
  failOnUnhandled();
  const otel = new TestOtel();
  let mounted: Mounted;
  let refuse = false;
  let client: McpClient;
  beforeAll(async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      legacy: true,
      telemetry: otel.providers,
    });
    mounted = await mount("node", mcp);
    client = await McpClient.connect(mounted.url, {
      era: "legacy",
      eraCache: new Map(),
      telemetry: otel.providers,
      onInput: {
        elicitation: async () => {
          if (refuse) throw new Error("the user closed the dialog");
          return { action: "accept", content: { ok: true } };
        },
      },
    });
  });
  afterAll(async () => {
    await client.close();
    await mounted.close();
  });
  beforeEach(() => {
    refuse = false;
    otel.reset();
  });

  it("should answer elicitation/create inside a SERVER span under the server's CLIENT span", async () => {
    const result = await client.callTool("confirm", { item: "file.txt" });
    expect(result.isError).not.toBe(true);
    const call = await only(otel, "tools/call confirm", SpanKind.CLIENT);
    const served = await only(otel, "tools/call confirm", SpanKind.SERVER);
    const asked = await only(otel, "elicitation/create", SpanKind.CLIENT);
    const answered = await only(otel, "elicitation/create", SpanKind.SERVER);
    expectChild(served, call);
    expectChild(asked, served);
    expectChild(answered, asked);
    expect(answered.attributes).toMatchObject({
      "mcp.method.name": "elicitation/create",
      "jsonrpc.request.id": asked.attributes["jsonrpc.request.id"],
      "network.transport": "tcp",
      "mcp.protocol.version": client.protocolVersion,
      "mcp.session.id": served.attributes["mcp.session.id"],
    });
    expect(answered.attributes["mcp.session.id"]).toEqual(expect.any(String));
    expect(answered.status.code).not.toBe(SpanStatusCode.ERROR);
    const points = await otel.histogram("mcp.server.operation.duration");
    const received = points.filter(
      (point) => point.attributes["mcp.method.name"] === "elicitation/create",
    );
    expect(received).toHaveLength(1);
    expect(received[0]!.attributes).toMatchObject({
      "network.transport": "tcp",
      "mcp.protocol.version": client.protocolVersion,
    });
  });

  it("should mark the SERVER span failed when the client's callback throws", async () => {
    refuse = true;
    await client.callTool("confirm", { item: "file.txt" }).catch(() => undefined);
    const answered = await only(otel, "elicitation/create", SpanKind.SERVER);
    expect(answered.status.code).toBe(SpanStatusCode.ERROR);
    expect(answered.attributes["error.type"]).toBe("-32603");
    expect(answered.attributes["rpc.response.status_code"]).toBe("-32603");
  });
});

describe("McpClient with telemetry: false", () => {
  failOnUnhandled();
  it("should answer the server's requests without a span of its own", async () => {
    const otel = new TestOtel();
    const mcp = createMcpHandler(createFixtureServer(), {
      legacy: true,
      telemetry: otel.providers,
    });
    const mounted = await mount("node", mcp);
    const client = await McpClient.connect(mounted.url, {
      era: "legacy",
      eraCache: new Map(),
      telemetry: false,
      onInput: { elicitation: async () => ({ action: "accept", content: { ok: true } }) },
    });
    try {
      const result = await client.callTool("confirm", { item: "x" });
      expect(result.structuredContent).toMatchObject({ action: "accept" });
      // The server still traces its side of the exchange; the client adds nothing.
      await only(otel, "elicitation/create", SpanKind.CLIENT);
      expect(otel.named("elicitation/create").map((span) => span.kind)).toEqual([SpanKind.CLIENT]);
    } finally {
      await client.close();
      await mounted.close();
    }
  });
});
