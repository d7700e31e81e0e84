import { context, metrics, SpanKind, trace } from "@opentelemetry/api";
import { toNodeHandler } from "../../src/adapters/node.js";
import { serve } from "./serve.js";
import { telemetryHandler } from "./telemetry-mode.js";

// mcp-mount (from src: the tree as it is, no build) in one of eight telemetry modes, picked by
// BENCH_TELEMETRY: `off` (telemetry: false), `api` (on, no SDK registered: the API's no-ops),
// `sdk` (on, with an SDK registered globally as an app would, sampling every span and exporting
// to nowhere), `sdk-10` (full, that SDK sampling 10% of traces, parent-based), `propagate` (that
// SDK, mode propagate: no span of ours, the carried context made active), `sdk-off` (that SDK
// registered, telemetry: false: what the SDK alone costs, its async context tracking above all)
// and `floor` (that SDK, telemetry: false, and around each
// HTTP request the least any instrumentation meeting the conventions must do: one SERVER span
// with the same attributes, active while the request runs, and one duration record with the
// metric's attributes; what the SDK itself charges for a span and a metric per request), and
// `floor-10`, the same with the SDK sampling 10% of traces as `sdk-10` does.

const mode = process.env.BENCH_TELEMETRY;
const { mcp, sdkRegistered } = telemetryHandler(mode);
const listener = toNodeHandler(mcp);
const tracer = trace.getTracer("bench-floor");
const duration = metrics.getMeter("bench-floor").createHistogram("mcp.server.operation.duration");

/** The floor: one span and one duration record per request, attributed as ours are. */
const floorListener: typeof listener = (req, res) => {
  const started = performance.now();
  const span = tracer.startSpan("tools/call echo", {
    kind: SpanKind.SERVER,
    attributes: {
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "jsonrpc.request.id": "1",
      "client.address": "127.0.0.1",
      "mcp.protocol.version": "2026-07-28",
      "mcp_mount.era": "modern",
    },
  });
  res.once("finish", () => {
    span.end();
    duration.record((performance.now() - started) / 1000, {
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "mcp.protocol.version": "2026-07-28",
    });
  });
  return context.with(trace.setSpan(context.active(), span), () => listener(req, res));
};

// An app that registers an SDK runs each request inside its async context (the HTTP
// instrumentation does), which turns on Node's promise hooks: every SDK mode does the same, so
// `sdk` ÷ `sdk-off` is what our spans add to such an app.
serve(
  mode?.startsWith("floor")
    ? (req, res) => context.with(context.active(), () => floorListener(req, res))
    : sdkRegistered
      ? (req, res) => context.with(context.active(), () => listener(req, res))
      : listener,
);
