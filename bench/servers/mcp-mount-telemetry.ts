import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  ExportResultCode,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { toNodeHandler } from "../../src/adapters/node.js";
import { createMcpHandler, McpServer } from "../../src/index.js";
import { ECHO_DESCRIPTION, serve } from "./serve.js";

// mcp-mount (from src: the tree as it is, no build) in one of four telemetry modes, picked by
// BENCH_TELEMETRY: `off` (telemetry: false), `api` (on, no SDK registered: the API's no-ops),
// `sdk` (on, with an SDK registered globally as an app would, sampling every span and exporting
// to nowhere) and `sdk-off` (that SDK registered, telemetry: false: what the SDK alone costs,
// its async context tracking above all).

/** Accepts every batch and drops it: the SDK's work without a collector's. */
const dropAll = {
  export: (_items: unknown, done: (result: { code: ExportResultCode }) => void) =>
    done({ code: ExportResultCode.SUCCESS }),
  forceFlush: async () => {},
  shutdown: async () => {},
};

function registerSdk(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({
      sampler: new AlwaysOnSampler(),
      spanProcessors: [new BatchSpanProcessor(dropAll)],
    }),
  );
  const reader = new PeriodicExportingMetricReader({
    exporter: dropAll,
    exportIntervalMillis: 1_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
}

const mode = process.env.BENCH_TELEMETRY;
if (mode !== "off" && mode !== "api" && mode !== "sdk" && mode !== "sdk-off")
  throw new TypeError("BENCH_TELEMETRY must be off, api, sdk or sdk-off");
if (mode === "sdk" || mode === "sdk-off") registerSdk();
const telemetryOff = mode === "off" || mode === "sdk-off";

const server = new McpServer({ name: `bench-telemetry-${mode}`, version: "1.0.0" });
server.tool(
  {
    name: "echo",
    description: ECHO_DESCRIPTION,
    input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  ({ text }) => String(text),
);
const secret = "bench-secret-0123456789abcdef";
const listener = toNodeHandler(
  createMcpHandler(server, { secret, ...(telemetryOff && { telemetry: false }) }),
);
// An app that registers an SDK runs each request inside its async context (the HTTP
// instrumentation does), which turns on Node's promise hooks: both SDK modes do the same, so
// `sdk` ÷ `sdk-off` is what our spans add to such an app.
serve(
  mode === "sdk" || mode === "sdk-off"
    ? (req, res) => context.with(context.active(), () => listener(req, res))
    : listener,
);
