import { context, propagation } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

// What an app's SDK registers globally: async context (so handlers see the request's span) and
// W3C trace context and baggage propagation. Setting them twice is a no-op.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(
  new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  }),
);

/** A metric reader the test pulls from (no timer, no exporter). */
class PullReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** A real OpenTelemetry SDK for one suite: spans kept in memory, metrics read on demand. */
export class TestOtel {
  readonly exporter = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.exporter)],
  });
  readonly #reader = new PullReader();
  readonly meterProvider = new MeterProvider({ readers: [this.#reader] });

  /** The providers, as the `telemetry` option of a handler or client takes them. */
  get providers() {
    return { tracerProvider: this.tracerProvider, meterProvider: this.meterProvider };
  }

  /** Every span ended so far. */
  spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[] {
    return this.spans().filter((span) => span.name === name);
  }

  /** Forgets the spans ended so far. */
  reset(): void {
    this.exporter.reset();
  }

  /** The data points of a histogram (cumulative since the suite began). */
  async histogram(name: string): Promise<DataPoint<Histogram>[]> {
    const { resourceMetrics } = await this.#reader.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((candidate) => candidate.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<Histogram>[];
  }
}
