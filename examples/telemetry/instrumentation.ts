import { metrics } from "@opentelemetry/api";
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-node";

// An app's OpenTelemetry setup, loaded before the app (`node --import`) so it is in place before
// the first request: mcp-mount uses the global providers it registers, with no option. Spans and
// metrics go to the console here; an app would use an OTLP exporter
// (@opentelemetry/exporter-trace-otlp-http) pointed at its collector instead.

const tracerProvider = new NodeTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
});
// The global tracer provider, an AsyncLocalStorage context manager (so a handler's own spans
// land under its request's) and the W3C trace context and baggage propagators.
tracerProvider.register();

// mcp.server.operation.duration and the session histograms, printed every 10 s.
const meterProvider = new MeterProvider({
  readers: [
    new PeriodicExportingMetricReader({
      exporter: new ConsoleMetricExporter(),
      exportIntervalMillis: Number(process.env.OTEL_METRIC_EXPORT_INTERVAL ?? 10_000),
    }),
  ],
});
metrics.setGlobalMeterProvider(meterProvider);
