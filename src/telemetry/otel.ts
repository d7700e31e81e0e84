import type * as Api from "@opentelemetry/api";

/** The OpenTelemetry API's module. */
export type OTelApi = typeof Api;

/** The API's no-op objects, to tell an SDK's from them and to stand in for ours. */
export interface Noops {
  /** What the API's global tracer provider delegates to while no SDK is registered. */
  tracerProvider: Api.TracerProvider;
  /** The class of the meters a meter provider gives while no SDK is registered. */
  Meter: Function;
  /** The histogram of the API's no-op meter: what propagate mode records into. */
  histogram: Api.Histogram;
  /** A span that records nothing and names no trace: what propagate mode's operations hold. */
  span: Api.Span;
}

/**
 * Where the API (1.x, any copy of it) keeps what is registered with it: an SDK's providers, its
 * propagator and context manager, a diagnostic logger. The API creates it on the first
 * registration, so while it is absent nothing could be traced and the API need not be loaded.
 */
const REGISTRY = Symbol.for("opentelemetry.js.api.1");

let api: OTelApi | undefined;
let noops: Noops | undefined;
let loading: Promise<void> | undefined;
let settled = false;

/**
 * The API, once {@link loadOtel} loaded it. Telemetry's operations run only when it is live,
 * which it is only then: they read it with `otel()!`.
 */
export const otel = (): OTelApi | undefined => api;

/** The API's no-op objects, once it is loaded. */
export const otelNoops = (): Noops | undefined => noops;

/** True once anything was registered with an OpenTelemetry API in this process. */
export const otelRegistered = (): boolean =>
  (globalThis as Record<symbol, unknown>)[REGISTRY] !== undefined;

/**
 * Loads the API (an import of 47 CommonJS files, about a tenth of a cold start, which a server
 * without an SDK never pays). Settles once; when the API cannot be loaded, it says so once, stays
 * unloaded, and telemetry records nothing.
 */
export function loadOtel(): Promise<void> {
  loading ??= import("@opentelemetry/api").then(
    (loaded) => {
      const meter = loaded.createNoopMeter();
      noops = {
        tracerProvider: new loaded.ProxyTracerProvider().getDelegate(),
        Meter: meter.constructor,
        histogram: meter.createHistogram("mcp-mount.noop"),
        span: loaded.trace.wrapSpanContext(loaded.INVALID_SPAN_CONTEXT),
      };
      api = loaded;
      settled = true;
    },
    (error: unknown) => {
      settled = true;
      // An SDK was registered (or providers given) yet the peer dependency is missing or broken:
      // say so once, as nothing of ours will be traced.
      console.warn(`mcp-mount: telemetry is off, @opentelemetry/api did not load: ${error}`);
    },
  );
  return loading;
}

/** True once {@link loadOtel} has settled, whether the API loaded or not. */
export const otelSettled = (): boolean => settled;
