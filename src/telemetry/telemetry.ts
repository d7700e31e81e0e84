import type {
  Attributes,
  Histogram,
  Meter,
  MeterProvider,
  TextMapGetter,
  TextMapSetter,
  Tracer,
  TracerProvider,
} from "@opentelemetry/api";
import { isObject, type JsonObject } from "../protocol/messages.js";
import { DURATION_BUCKETS } from "./attributes.js";
import { loadOtel, otel, otelNoops, otelRegistered, otelSettled } from "./otel.js";

/**
 * What telemetry does: `full` records spans and metrics; `propagate` records nothing of ours but
 * makes the trace context a message carries the active one while its handler runs (and injects
 * the active one into what a client sends), for apps whose own layer owns the spans; `off`
 * records and propagates nothing, as `false` does.
 */
export type TelemetryMode = "off" | "propagate" | "full";

/** What telemetry does and where it goes; the providers default to the global ones an SDK registers. */
export interface TelemetryOptions {
  /** Spans and metrics, only the trace context, or nothing. @default "full" */
  mode?: TelemetryMode;
  /** The tracer provider for spans. @default the global one (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /** The meter provider for duration histograms. @default the global one (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
}

/** The instrumentation scope: this package. */
const SCOPE = "mcp-mount";
/** The scope's version (the package's). */
const SCOPE_VERSION = "0.1.0";

/** Reads the W3C keys (`traceparent`, `tracestate`, `baggage`) from a message's `params._meta`. */
export const metaGetter: TextMapGetter<JsonObject | undefined> = {
  keys: (meta) => (meta ? Object.keys(meta) : []),
  get: (meta, key) => {
    const value = meta?.[key];
    return typeof value === "string" ? value : undefined;
  },
};

/** Writes them unprefixed, as the conventions and SEP-414 say. */
export const metaSetter: TextMapSetter<JsonObject> = {
  set: (meta, key, value) => {
    meta[key] = value;
  },
};

/** A message's `params._meta`, when it has one. */
export function metaOf(params: JsonObject | undefined): JsonObject | undefined {
  const meta = params?._meta;
  return isObject(meta) ? meta : undefined;
}

/**
 * The tracer and the duration histograms of one server or client. The meter is taken on first
 * use, so an SDK registered after the handler was built (but before traffic) is still found.
 */
export class Telemetry {
  /**
   * The tracer our spans come from (taken again when `live` sees another SDK); in propagate mode
   * the API's no-op tracer, whose spans only carry their parent's context, so anything that
   * starts one (a task's run) records nothing.
   */
  get tracer(): Tracer {
    return this.#tracer!;
  }
  #tracer: Tracer | undefined;
  /** True in full mode: spans and metrics of ours; false in propagate mode. */
  readonly full: boolean;
  readonly #tracerProvider: TracerProvider | undefined;
  readonly #meterProvider: MeterProvider | undefined;
  #meter: Meter | undefined;
  readonly #histograms = new Map<string, Histogram>();
  #live = false;
  /** The tracer provider (a proxy's delegate) and meter provider `live` last looked at. */
  #seenTracers: TracerProvider | undefined;
  #seenMeters: MeterProvider | undefined;
  /** The registered propagator's fields, read when `live` looked last. */
  #fields: string[] = [];
  #asked = 0;

  constructor(options: TelemetryOptions = {}) {
    this.#tracerProvider = options.tracerProvider;
    this.full = options.mode !== "propagate";
    this.#meterProvider = options.meterProvider;
    // An SDK registered before the handler was built: the API loads while the app starts.
    void this.pending;
  }

  /**
   * While the OpenTelemetry API is not loaded yet but is needed (an SDK registered, or providers
   * given), its loading, which the transports await before the message that found it: so the
   * first message after an SDK registered is traced like the rest. Else undefined: with nothing
   * registered the API is never loaded, and telemetry records nothing.
   */
  get pending(): Promise<void> | undefined {
    if (otel() !== undefined || otelSettled()) return undefined;
    if (!this.#tracerProvider && !this.#meterProvider && !otelRegistered()) return undefined;
    return loadOtel();
  }

  /**
   * True when an SDK takes spans or metrics (registered globally, or given). Without one nothing
   * is recorded: spans and metrics are skipped outright rather than made as the API's no-ops,
   * which cost a traced request a few microseconds for nothing. Asked on every message, so it
   * compares the providers with those it saw last (an SDK registered, replaced or disabled later
   * is noticed at once) and asks a meter only when they changed. Propagate mode asks the same:
   * without an SDK no propagator reads the context, and no span of the app's would join it.
   */
  get live(): boolean {
    const api = otel();
    if (api === undefined) {
      void this.pending;
      return false;
    }
    const tracers = this.#tracerProvider ?? api.trace.getTracerProvider();
    const delegate = tracers instanceof api.ProxyTracerProvider ? tracers.getDelegate() : tracers;
    const meters = this.#meterProvider ?? api.metrics.getMeterProvider();
    if (delegate === this.#seenTracers && meters === this.#seenMeters) return this.#live;
    const noops = otelNoops()!;
    if (meters !== this.#seenMeters) {
      // The meter taken before may be the no-op one, or another SDK's: take it again.
      this.#meter = undefined;
      this.#histograms.clear();
    }
    // Propagate mode's tracer is the API's no-op one, whose spans only carry their parent's
    // context. A tracer holds on to the SDK it first reached: another SDK needs another tracer.
    if (this.#tracer === undefined)
      this.#tracer = (this.full ? tracers : noops.tracerProvider).getTracer(SCOPE, SCOPE_VERSION);
    else if (this.full && this.#seenTracers !== undefined && delegate !== this.#seenTracers)
      this.#tracer = tracers.getTracer(SCOPE, SCOPE_VERSION);
    this.#seenTracers = delegate;
    this.#seenMeters = meters;
    this.#fields = api.propagation.fields();
    this.#live =
      delegate !== noops.tracerProvider ||
      !(meters.getMeter(SCOPE, SCOPE_VERSION) instanceof noops.Meter);
    return this.#live;
  }

  /**
   * Whether `_meta` holds a key the registered propagator reads (W3C: `traceparent`, `tracestate`,
   * `baggage`): most messages carry none, and extracting from them costs more than the rest of a
   * span's setup. A propagator that names no fields is always asked. The propagator's fields are
   * read again when the providers change (an SDK registers its propagator with them) and every
   * 1,024 messages carrying `_meta`: a propagator replaced on its own later, with no provider
   * changed, is read within that many.
   */
  carriesContext(meta: JsonObject | undefined): boolean {
    if (meta === undefined) return false;
    if ((++this.#asked & 1023) === 0) this.#fields = otel()!.propagation.fields();
    const fields = this.#fields;
    if (fields.length === 0) return true;
    for (const field of fields) if (meta[field] !== undefined) return true;
    return false;
  }

  /**
   * True in propagate mode for a message that carries no trace context of its own: nothing of
   * ours is recorded for it, and it runs in the context active as it arrived, so it needs no
   * operation at all (HTTP and stdio alike).
   */
  passesThrough(params: JsonObject | undefined): boolean {
    return !this.full && !this.carriesContext(metaOf(params));
  }

  /** A duration histogram of the conventions (seconds, their bucket boundaries). */
  histogram(name: string, description: string): Histogram {
    if (!this.full) return otelNoops()!.histogram;
    let histogram = this.#histograms.get(name);
    if (!histogram) {
      this.#meter ??= (this.#meterProvider ?? otel()!.metrics.getMeterProvider()).getMeter(
        SCOPE,
        SCOPE_VERSION,
      );
      histogram = this.#meter.createHistogram(name, {
        unit: "s",
        description,
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      });
      this.#histograms.set(name, histogram);
    }
    return histogram;
  }

  /**
   * Records `mcp.server.session.duration` for a legacy session that ended here (DELETE, or its
   * client's quota): from its creation, whichever process created it.
   */
  sessionEnded(createdAt: number, protocolVersion: string, transport: "tcp" | "pipe"): void {
    if (!this.full || !this.live) return;
    const attributes: Attributes = {
      "mcp.protocol.version": protocolVersion,
      "network.transport": transport,
    };
    if (transport === "tcp") attributes["network.protocol.name"] = "http";
    this.histogram(
      "mcp.server.session.duration",
      "The duration of the MCP session as observed on the MCP server",
    ).record(Math.max(0, Date.now() - createdAt) / 1000, attributes);
  }
}

/** The telemetry of an option: full by default (global providers), none with `false` or mode off. */
export function createTelemetry(
  options: TelemetryOptions | false | undefined,
): Telemetry | undefined {
  if (options === false || options?.mode === "off") return undefined;
  if (options?.mode !== undefined && options.mode !== "propagate" && options.mode !== "full")
    throw new TypeError(`telemetry.mode must be "off", "propagate" or "full", not ${options.mode}`);
  return new Telemetry(options);
}
