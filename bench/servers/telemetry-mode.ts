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
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { createMcpHandler, type McpHandler, McpServer } from "../../src/index.js";
import { ECHO_DESCRIPTION } from "./serve.js";

// The handler of one telemetry mode of bench:telemetry, from src (the tree as it is, no build),
// with the SDK registered globally as an app would when the mode has one: see
// mcp-mount-telemetry.ts for the modes. Shared by that server and the in-process measure.

/** The modes, by the ids bench/telemetry.ts gives them. */
export const TELEMETRY_MODES = [
  "off",
  "api",
  "sdk",
  "sdk-10",
  "propagate",
  "sdk-off",
  "floor",
  "floor-10",
];

/** Accepts every batch and drops it: the SDK's work without a collector's. */
const dropAll = {
  export: (_items: unknown, done: (result: { code: ExportResultCode }) => void) =>
    done({ code: ExportResultCode.SUCCESS }),
  forceFlush: async () => {},
  shutdown: async () => {},
};

function registerSdk(sampler: Sampler): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({
      sampler,
      spanProcessors: [new BatchSpanProcessor(dropAll)],
    }),
  );
  const reader = new PeriodicExportingMetricReader({
    exporter: dropAll,
    exportIntervalMillis: 1_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
}

/** Registers the mode's SDK, if it has one, and returns the echo server's handler in the mode. */
export function telemetryHandler(mode: string | undefined): {
  mcp: McpHandler;
  sdkRegistered: boolean;
} {
  if (mode === undefined || !TELEMETRY_MODES.includes(mode))
    throw new TypeError(`BENCH_TELEMETRY must be one of ${TELEMETRY_MODES.join(", ")}`);
  const sdkRegistered = mode !== "off" && mode !== "api";
  if (sdkRegistered)
    registerSdk(
      mode === "sdk-10" || mode === "floor-10"
        ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) })
        : new AlwaysOnSampler(),
    );
  const telemetryOff = mode === "off" || mode === "sdk-off" || mode.startsWith("floor");
  const server = new McpServer({ name: `bench-telemetry-${mode}`, version: "1.0.0" });
  server.tool(
    {
      name: "echo",
      description: ECHO_DESCRIPTION,
      input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    },
    ({ text }) => String(text),
  );
  const mcp = createMcpHandler(server, {
    secret: "bench-secret-0123456789abcdef",
    ...(telemetryOff && { telemetry: false }),
    ...(mode === "propagate" && { telemetry: { mode: "propagate" } }),
  });
  return { mcp, sdkRegistered };
}
