import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  context,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../src/client/index.js";
import {
  type Cluster,
  type ClusterServer,
  FIXTURE_SERVER,
  openStream,
  type RedisTopology,
  servedBy,
  startCluster,
} from "../helpers/cluster.js";
import { LEGACY_VERSION, legacyHeaders, readLegacy } from "../helpers/legacy.js";
import { call, type Send, VERSION, viaUrl } from "../helpers/modern.js";
import { TestOtel } from "../helpers/otel.js";
import { readSpanLines, type SpanLine } from "../helpers/span-lines.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import type { SseReader } from "../helpers/stream.js";

/** Generous waits: these suites share a loaded machine with every other suite. */
const WAIT_MS = 10_000;
const ELICITATION = { elicitation: {} };
const CONFIRM = { name: "confirm", arguments: { item: "traced" } };
const ACCEPTED = { action: "accept", content: { ok: true } };

/** cluster-server.ts with an OpenTelemetry SDK that writes every span to `spansDir`. */
function tracedServer(spansDir: string): ClusterServer {
  return {
    ...FIXTURE_SERVER,
    script: fileURLToPath(new URL("../helpers/traced-cluster-server.ts", import.meta.url)),
    env: { SPANS_DIR: spansDir },
  };
}

// The test process's own SDK (async context and W3C propagation registered globally, its
// providers not): its spans are the client side of each trace.
const otel = new TestOtel();
const tracer = otel.tracerProvider.getTracer("cluster-telemetry-test");
const propagator = new W3CTraceContextPropagator();

/** Starts the CLIENT span of one message under `parent`, as an instrumented client does. */
function clientSpan(parent: Span, name: string): Span {
  return tracer.startSpan(name, { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, parent));
}

/** The `_meta` that carries `span` to the server (W3C trace context, unprefixed). */
function metaOf(span: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier;
}

/** The only span named `name`. */
function the(spans: SpanLine[], name: string): SpanLine {
  const named = spans.filter((span) => span.name === name);
  expect(named.map((span) => span.name)).toEqual([name]);
  return named[0]!;
}

async function next(reader: SseReader) {
  const message = await reader.next(WAIT_MS);
  if (message) assertLegacyMessage(message, "tools/call");
  return message;
}

describe.each<RedisTopology>(["standalone", "cluster"])(
  "one trace across processes (OpenTelemetry SDK in each, Redis store, %s, round-robin proxy)",
  (topology) => {
    let cluster: Cluster;
    /** Sends through the proxy. */
    let proxy: Send;
    let spansDir: string;

    /** The pid of the process that answered through the proxy. */
    const pidOf = (response: { headers: Headers }) => cluster.backends[servedBy(response)]!.pid;

    /** The ids of the spans written so far, to tell this test's from earlier ones. */
    const writtenIds = () => new Set(readSpanLines(spansDir).map((span) => span.spanId));

    /** The spans of one trace, once exactly the spans named `names` have been written. */
    async function spansOf(traceId: string, names: string[]): Promise<SpanLine[]> {
      const inTrace = () => readSpanLines(spansDir).filter((span) => span.traceId === traceId);
      await expect
        .poll(
          () =>
            inTrace()
              .map((span) => span.name)
              .sort(),
          { timeout: WAIT_MS },
        )
        .toEqual([...names].sort());
      return inTrace();
    }

    /** Spans written since `before` outside `traceId`: a trace that broke in two. */
    const strays = (before: Set<string>, traceId: string) =>
      readSpanLines(spansDir).filter(
        (span) => !before.has(span.spanId) && span.traceId !== traceId,
      );

    /** Posts one legacy message through the proxy with `span` in its `_meta`. */
    function postTraced(span: Span, message: Record<string, unknown>, session?: string) {
      const params = { ...(message.params as object), _meta: metaOf(span) };
      return proxy({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({ jsonrpc: "2.0", ...message, params }),
      });
    }

    /** Opens a legacy session under `root`: initialize and its acknowledgement each traced. */
    async function openTracedSession(root: Span) {
      const initializeSpan = clientSpan(root, "initialize");
      const opened = await postTraced(initializeSpan, {
        id: "init",
        method: "initialize",
        params: {
          protocolVersion: LEGACY_VERSION,
          capabilities: ELICITATION,
          clientInfo: { name: "cluster-telemetry-test", version: "0.0.0" },
        },
      });
      initializeSpan.end();
      expect(readLegacy(opened, "initialize").result.protocolVersion).toBe(LEGACY_VERSION);
      const session = opened.headers.get("mcp-session-id")!;
      const initializedSpan = clientSpan(root, "notifications/initialized");
      const initialized = await postTraced(
        initializedSpan,
        { method: "notifications/initialized" },
        session,
      );
      initializedSpan.end();
      expect(initialized.status).toBe(202);
      return { session, opened, initialized, initializeSpan, initializedSpan };
    }

    beforeAll(async () => {
      spansDir = mkdtempSync(join(tmpdir(), "mcp-mount-spans-"));
      cluster = await startCluster({ processes: 3, server: tracedServer(spansDir), topology });
      proxy = viaUrl(cluster.url);
    }, 90_000);
    afterAll(async () => {
      await cluster?.stop();
      if (spansDir) rmSync(spansDir, { recursive: true, force: true });
    });

    it("should continue the client's trace on the process that serves an MRTR retry, linked to round 1", async () => {
      const before = writtenIds();
      const root = tracer.startSpan("modern elicitation");
      const { traceId } = root.spanContext();
      const firstSpan = clientSpan(root, "tools/call confirm");
      const first = await call(proxy, "tools/call", CONFIRM, {
        capabilities: ELICITATION,
        meta: metaOf(firstSpan),
      });
      firstSpan.end();
      expect(first.result.resultType).toBe("input_required");
      const retrySpan = clientSpan(root, "tools/call confirm");
      const retry = await call(
        proxy,
        "tools/call",
        {
          ...CONFIRM,
          inputResponses: { confirm: ACCEPTED },
          requestState: first.result.requestState,
        },
        { capabilities: ELICITATION, meta: metaOf(retrySpan) },
      );
      retrySpan.end();
      root.end();
      expect(retry.result).toMatchObject({
        resultType: "complete",
        structuredContent: { rounds: 2 },
      });
      expect(servedBy(retry)).not.toBe(servedBy(first));

      const spans = await spansOf(traceId, ["tools/call confirm", "tools/call confirm"]);
      const [round1, round2] = spans.sort(
        (a, b) => Number(a.attributes["mcp_mount.round"]) - Number(b.attributes["mcp_mount.round"]),
      );
      const toolCall = {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "confirm",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": VERSION,
        "mcp_mount.era": "modern",
        "network.transport": "tcp",
      };
      // Each round's parent is the context its own request carried; round 1 is a link.
      expect(round1).toMatchObject({
        pid: pidOf(first),
        kind: SpanKind.SERVER,
        parentSpanId: firstSpan.spanContext().spanId,
        links: [],
        status: { code: SpanStatusCode.UNSET },
        attributes: {
          ...toolCall,
          "mcp_mount.round": 1,
          "mcp_mount.result_type": "input_required",
          "mcp_mount.input_keys": ["confirm"],
        },
      });
      expect(round2).toMatchObject({
        pid: pidOf(retry),
        kind: SpanKind.SERVER,
        parentSpanId: retrySpan.spanContext().spanId,
        links: [{ traceId, spanId: round1!.spanId }],
        status: { code: SpanStatusCode.UNSET },
        attributes: { ...toolCall, "mcp_mount.round": 2 },
      });
      expect(round2!.attributes).not.toHaveProperty("mcp_mount.result_type");
      expect(round2!.pid).not.toBe(round1!.pid);
      expect(strays(before, traceId)).toEqual([]);
    });

    it("should keep a legacy elicitation in the client's trace when its reply is posted to another process", async () => {
      const before = writtenIds();
      const root = tracer.startSpan("legacy elicitation");
      const { traceId } = root.spanContext();
      const { session, opened, initialized, initializeSpan, initializedSpan } =
        await openTracedSession(root);
      const callSpan = clientSpan(root, "tools/call confirm");
      const toolCall = await openStream(cluster.url, {
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "traced-1",
          method: "tools/call",
          params: { ...CONFIRM, _meta: metaOf(callSpan) },
        }),
      });
      const ask = await next(toolCall.reader);
      expect(ask).toMatchObject({
        method: "elicitation/create",
        params: { message: "Delete traced?" },
      });
      const reply = await proxy({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({ jsonrpc: "2.0", id: ask?.id, result: ACCEPTED }),
      });
      expect(reply.status).toBe(202);
      expect(servedBy(reply)).not.toBe(servedBy(toolCall.response));
      expect(await next(toolCall.reader)).toMatchObject({
        id: "traced-1",
        result: { structuredContent: { ...ACCEPTED, rounds: 1 } },
      });
      await toolCall.reader.done;
      callSpan.end();
      root.end();

      const spans = await spansOf(traceId, [
        "initialize",
        "notifications/initialized",
        "tools/call confirm",
        "elicitation/create",
      ]);
      const tool = the(spans, "tools/call confirm");
      const elicitation = the(spans, "elicitation/create");
      expect(the(spans, "initialize")).toMatchObject({
        pid: pidOf(opened),
        kind: SpanKind.SERVER,
        parentSpanId: initializeSpan.spanContext().spanId,
      });
      expect(the(spans, "notifications/initialized")).toMatchObject({
        pid: pidOf(initialized),
        kind: SpanKind.SERVER,
        parentSpanId: initializedSpan.spanContext().spanId,
        attributes: { "mcp.session.id": session },
      });
      expect(tool).toMatchObject({
        pid: pidOf(toolCall.response),
        kind: SpanKind.SERVER,
        parentSpanId: callSpan.spanContext().spanId,
        status: { code: SpanStatusCode.UNSET },
        attributes: {
          "mcp.method.name": "tools/call",
          "gen_ai.tool.name": "confirm",
          "jsonrpc.request.id": "traced-1",
          "mcp.session.id": session,
          "mcp.protocol.version": LEGACY_VERSION,
          "mcp_mount.era": "legacy",
        },
      });
      // The server's own request to the client: a CLIENT span under the tool's, on its process,
      // ended by the reply that reached another process.
      expect(elicitation).toMatchObject({
        pid: tool.pid,
        kind: SpanKind.CLIENT,
        parentSpanId: tool.spanId,
        status: { code: SpanStatusCode.UNSET },
        attributes: {
          "mcp.method.name": "elicitation/create",
          "mcp.session.id": session,
          "network.transport": "tcp",
        },
      });
      // ...whose context the client received, for its own SERVER span.
      expect(ask?.params).toMatchObject({
        _meta: { traceparent: `00-${traceId}-${elicitation.spanId}-01` },
      });
      expect(new Set(spans.map((span) => span.pid)).size).toBeGreaterThanOrEqual(2);
      expect(strays(before, traceId)).toEqual([]);
    });

    /** Connects an McpClient through the proxy, on the test's providers, accepting elicitations. */
    function connectClient(era: "modern" | "legacy") {
      return McpClient.connect(cluster.url, {
        era,
        eraCache: new Map(),
        telemetry: otel.providers,
        onInput: { elicitation: async () => ACCEPTED },
      });
    }

    /** Runs `fn` with a new root span active, as an instrumented app does; ends it after. */
    async function underRoot<T>(name: string, fn: () => Promise<T>) {
      const root = tracer.startSpan(name);
      try {
        const result = await context.with(trace.setSpan(ROOT_CONTEXT, root), fn);
        return { root, traceId: root.spanContext().traceId, result };
      } finally {
        root.end();
      }
    }

    /** The test's own spans of `traceId` named `name` of `kind`. */
    const ownSpans = (traceId: string, name: string, kind: SpanKind) =>
      otel
        .named(name)
        .filter((span) => span.kind === kind && span.spanContext().traceId === traceId);

    it("should keep an McpClient's MRTR call in one trace when its retry is served by another process", async () => {
      const client = await connectClient("modern");
      try {
        const before = writtenIds();
        const { root, traceId, result } = await underRoot("app: modern call", () =>
          client.callTool("confirm", { item: "traced" }),
        );
        expect(result.structuredContent).toMatchObject({ ...ACCEPTED, rounds: 2 });

        const logical = ownSpans(traceId, "tools/call confirm", SpanKind.INTERNAL);
        expect(logical.map((span) => span.parentSpanContext?.spanId)).toEqual([
          root.spanContext().spanId,
        ]);
        const rounds = ownSpans(traceId, "tools/call confirm", SpanKind.CLIENT);
        expect(rounds.map((span) => span.parentSpanContext?.spanId)).toEqual([
          logical[0]!.spanContext().spanId,
          logical[0]!.spanContext().spanId,
        ]);
        const served = await spansOf(traceId, ["tools/call confirm", "tools/call confirm"]);
        const roundOf = (span: SpanLine) => span.attributes["mcp_mount.round"];
        // Each round's SERVER span is the child of that round's CLIENT span, wherever it ran.
        for (const round of rounds) {
          const requestId = round.attributes["jsonrpc.request.id"];
          const server = served.find((span) => span.attributes["jsonrpc.request.id"] === requestId);
          expect(server).toMatchObject({
            kind: SpanKind.SERVER,
            parentSpanId: round.spanContext().spanId,
            attributes: { "mcp_mount.round": round.attributes["mcp_mount.round"] },
          });
        }
        const first = served.find((span) => roundOf(span) === 1)!;
        const retry = served.find((span) => roundOf(span) === 2)!;
        expect(retry.pid).not.toBe(first.pid);
        expect(retry.links).toEqual([{ traceId, spanId: first.spanId }]);
        expect(strays(before, traceId)).toEqual([]);
      } finally {
        await client.close();
      }
    });

    it("should keep an McpClient's legacy call in one trace when its elicitation reply reaches another process", async () => {
      const client = await connectClient("legacy");
      try {
        const before = writtenIds();
        const logged = cluster.proxyLog.length;
        const { traceId, result } = await underRoot("app: legacy call", () =>
          client.callTool("confirm", { item: "traced" }),
        );
        expect(result.structuredContent).toMatchObject({ ...ACCEPTED, rounds: 1 });
        // The call's POST, then the client's reply to elicitation/create, each on its own process.
        const posts = cluster.proxyLog.slice(logged).filter((entry) => entry.method === "POST");
        expect(posts).toHaveLength(2);
        const [callPost, replyPost] = posts.map((entry) => cluster.backends[entry.backend!]!.pid);
        expect(replyPost).not.toBe(callPost);

        const rounds = ownSpans(traceId, "tools/call confirm", SpanKind.CLIENT);
        expect(rounds).toHaveLength(1);
        const spans = await spansOf(traceId, ["tools/call confirm", "elicitation/create"]);
        const tool = the(spans, "tools/call confirm");
        expect(tool).toMatchObject({
          pid: callPost,
          kind: SpanKind.SERVER,
          parentSpanId: rounds[0]!.spanContext().spanId,
          attributes: { "mcp_mount.era": "legacy" },
        });
        expect(the(spans, "elicitation/create")).toMatchObject({
          pid: callPost,
          kind: SpanKind.CLIENT,
          parentSpanId: tool.spanId,
          status: { code: SpanStatusCode.UNSET },
        });
        expect(strays(before, traceId)).toEqual([]);
      } finally {
        await client.close();
      }
    });
  },
);
