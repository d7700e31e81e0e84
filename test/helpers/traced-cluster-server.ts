import { join } from "node:path";
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { JsonLinesSpanProcessor } from "./span-lines.js";

// One backend of test/helpers/cluster.ts with an OpenTelemetry SDK registered globally, as an
// app does: cluster-server.ts unchanged, its handler on the global providers (the default).
// Each finished span is appended to SPANS_DIR/<pid>.jsonl (test/helpers/span-lines.ts).
// Env: SPANS_DIR (required), and cluster-server.ts's own.

const spansDir = process.env.SPANS_DIR;
if (!spansDir) throw new Error("traced-cluster-server: SPANS_DIR is required");

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(
  new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  }),
);
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [new JsonLinesSpanProcessor(join(spansDir, `${process.pid}.jsonl`))],
  }),
);

// Loaded only now, so the SDK is in place before the server exists (import order alone would
// be undone by sorting the imports).
await import("./cluster-server.js");
