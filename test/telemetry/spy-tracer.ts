import { randomBytes } from "node:crypto";
import {
  type Attributes,
  type Context,
  context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";

/**
 * A span a sampler dropped, as an SDK gives it (not recording, a valid context with the sampled
 * flag clear), that counts every call made to describe it: an instrumentation that honours
 * sampling makes none.
 */
export class SpySpan implements Span {
  readonly name: string;
  /** The attributes it was started with: what a sampler would have seen. */
  readonly startAttributes: Attributes;
  /** The describing calls made to it (`setAttribute key`, `addEvent name`, `setStatus`…). */
  readonly calls: string[] = [];
  ended = false;
  readonly #context: SpanContext;

  constructor(name: string, options: SpanOptions, parent: SpanContext | undefined) {
    this.name = name;
    this.startAttributes = { ...options.attributes };
    this.#context = {
      traceId: parent?.traceId ?? randomBytes(16).toString("hex"),
      spanId: randomBytes(8).toString("hex"),
      traceFlags: 0,
    };
  }

  spanContext(): SpanContext {
    return this.#context;
  }
  setAttribute(key: string): this {
    this.calls.push(`setAttribute ${key}`);
    return this;
  }
  setAttributes(attributes: Attributes): this {
    this.calls.push(`setAttributes ${Object.keys(attributes).join(",")}`);
    return this;
  }
  addEvent(name: string): this {
    this.calls.push(`addEvent ${name}`);
    return this;
  }
  addLink(): this {
    this.calls.push("addLink");
    return this;
  }
  addLinks(): this {
    this.calls.push("addLinks");
    return this;
  }
  setStatus(): this {
    this.calls.push("setStatus");
    return this;
  }
  updateName(): this {
    this.calls.push("updateName");
    return this;
  }
  recordException(): void {
    this.calls.push("recordException");
  }
  end(): void {
    this.ended = true;
  }
  isRecording(): boolean {
    return false;
  }
}

/** A tracer provider whose sampler drops every span, keeping each for the test to inspect. */
export class SpyTracerProvider implements TracerProvider {
  readonly spans: SpySpan[] = [];

  getTracer(): Tracer {
    const startSpan = (name: string, options: SpanOptions = {}, parent?: Context): SpySpan => {
      const span = new SpySpan(name, options, trace.getSpanContext(parent ?? context.active()));
      this.spans.push(span);
      return span;
    };
    // Only startSpan is used by the package; startActiveSpan is there for the interface.
    const startActiveSpan = (name: string, ...rest: unknown[]) => {
      const fn = rest.at(-1) as (span: Span) => unknown;
      const span = startSpan(name);
      return context.with(trace.setSpan(context.active(), span), () => fn(span));
    };
    return { startSpan, startActiveSpan } as Tracer;
  }

  /** The spans started named `name`. */
  named(name: string): SpySpan[] {
    return this.spans.filter((span) => span.name === name);
  }

  /** Forgets the spans started so far. */
  reset(): void {
    this.spans.length = 0;
  }
}
