import type {
  Attributes,
  AttributeValue,
  Context,
  Link,
  Span,
  SpanContext,
} from "@opentelemetry/api";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import {
  describeOperation,
  failureOf,
  McpAttributes,
  type Outcome,
  OwnAttributes,
  resourceUriOf,
} from "./attributes.js";
import { recordFailure } from "./failure.js";
import { otel, otelNoops } from "./otel.js";
import { metaGetter, metaOf, type Telemetry } from "./telemetry.js";

/** The span context a W3C `traceparent` names, when it is well formed. */
export function spanContextOf(traceparent: string): SpanContext | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent);
  if (!match) return undefined;
  const spanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
  return otel()!.trace.isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** Where a message arrived: over HTTP (TCP), or stdio (a pipe). */
export interface Arrival {
  transport: "tcp" | "pipe";
  /** The client's address, when the host knows it (`trustProxy` decides which). */
  clientAddress?: string | undefined;
  /** The client's port, when the host knows it and no proxy stands between. */
  clientPort?: number | undefined;
  /** The HTTP version (`1.1`, `2`), when the host knows it. */
  httpVersion?: string | undefined;
}

/** The duration metric's attributes: the operation's, and how it arrived. */
function metricAttributes(
  message: { method: string; params?: JsonObject },
  arrival: Arrival,
): Attributes {
  const metric = describeOperation(message.method, message.params).attributes;
  metric["network.transport"] = arrival.transport;
  if (arrival.transport === "tcp") {
    metric["network.protocol.name"] = "http";
    if (arrival.httpVersion !== undefined) metric["network.protocol.version"] = arrival.httpVersion;
  }
  return metric;
}

/** The attributes of a span the sampler kept, beyond those it was started with. */
function describeSpan(
  span: Span,
  message: { method: string; id?: RequestId; params?: JsonObject },
  arrival: Arrival,
): void {
  span.setAttribute(McpAttributes.networkTransport, arrival.transport);
  if (arrival.transport === "tcp") {
    span.setAttribute(McpAttributes.networkProtocolName, "http");
    if (arrival.httpVersion !== undefined)
      span.setAttribute("network.protocol.version", arrival.httpVersion);
  }
  if (message.id !== undefined && message.id !== null)
    span.setAttribute(McpAttributes.requestId, String(message.id));
  const uri = resourceUriOf(message.method, message.params);
  if (uri !== undefined) span.setAttribute(McpAttributes.resourceUri, uri);
  if (arrival.clientAddress !== undefined)
    span.setAttribute(McpAttributes.clientAddress, arrival.clientAddress);
  if (arrival.clientPort !== undefined)
    span.setAttribute(McpAttributes.clientPort, arrival.clientPort);
}

/**
 * The SERVER span and duration of one JSON-RPC request or notification from the client, named
 * and attributed per the MCP semantic conventions. Its parent is the context the message carries
 * in `params._meta` (W3C trace context and baggage); the span active when the message arrived
 * (the HTTP server span, say) is linked, or is the parent when the message carries none.
 *
 * Whoever answers the message ends it: the dispatcher with the exact result or error, or the
 * transport with the answer it gave instead (an initialize, a 404, a store outage).
 */
export class ServerOperation {
  readonly context: Context;
  /** How the message arrived, for the spans of what the handler sends back over it. */
  readonly transport: Arrival["transport"];
  readonly #telemetry: Telemetry;
  /** Ours; in propagate mode, or when the sampler drops it, one that records nothing. */
  readonly #span: Span;
  /** The attributes the duration metric carries (low cardinality); none in propagate mode. */
  readonly #metric: Attributes | undefined;
  readonly #started = performance.now();
  #ended = false;
  #claimed = false;

  constructor(
    telemetry: Telemetry,
    message: { method: string; id?: RequestId; params?: JsonObject },
    arrival: Arrival,
  ) {
    this.#telemetry = telemetry;
    this.transport = arrival.transport;
    const { context, propagation, trace, SpanKind } = otel()!;
    const ambient = context.active();
    const meta = metaOf(message.params);
    const carried =
      meta && telemetry.carriesContext(meta)
        ? propagation.extract(ambient, meta, metaGetter)
        : ambient;
    if (!telemetry.full) {
      // Propagate mode: no span of ours; the handler runs in the context the message carried.
      this.#span = otelNoops()!.span;
      this.#metric = undefined;
      this.context = carried;
      return;
    }
    this.#metric = metricAttributes(message, arrival);
    // The sampler is given what it may decide on (method, tool or prompt); the rest is built
    // only for a span it keeps.
    const { spanName, attributes } = describeOperation(message.method, message.params);
    const ambientSpan = trace.getSpanContext(ambient);
    const links: Link[] = [];
    // The transport's span is linked, not the parent, when the message carries its own context.
    if (ambientSpan && trace.getSpanContext(carried) !== ambientSpan)
      links.push({ context: ambientSpan });
    this.#span = telemetry.tracer.startSpan(
      spanName,
      { kind: SpanKind.SERVER, attributes, links },
      carried,
    );
    if (this.#span.isRecording()) describeSpan(this.#span, message, arrival);
    this.context = trace.setSpan(carried, this.#span);
  }

  /**
   * True when the span records (full mode, kept by the sampler): what is costly to build for it
   * is built only then.
   */
  get recording(): boolean {
    return this.#span.isRecording();
  }

  /** True until the operation ended. */
  get open(): boolean {
    return !this.#ended;
  }

  /** True once the dispatcher took the operation over: it ends it with its answer. */
  get claimed(): boolean {
    return this.#claimed;
  }

  /** Takes the operation over (the dispatcher, which knows the exact outcome). */
  claim(): void {
    this.#claimed = true;
  }

  /** Records the round of a multi round-trip request, linked to the round before. */
  round(number: number, previous: string | undefined): void {
    if (!this.#span.isRecording()) return;
    this.#span.setAttribute(OwnAttributes.round, number);
    const link = previous === undefined ? undefined : spanContextOf(previous);
    if (link) this.#span.addLink({ context: link });
  }

  /** Records that the round ends asking the client for these inputs (`input_required`). */
  inputRequired(keys: string[]): void {
    if (this.#span.isRecording()) this.#span.setAttribute(OwnAttributes.inputKeys, keys);
  }

  /** The span as a W3C `traceparent`, for the next round to link to. */
  traceparent(): string | undefined {
    const { traceId, spanId, traceFlags } = this.#span.spanContext();
    if (!otel()!.trace.isSpanContextValid(this.#span.spanContext())) return undefined;
    return `00-${traceId}-${spanId}-0${traceFlags & 1}`;
  }

  /** Records what the era learnt (protocol version, session), on the span and the metric. */
  describe(era: "modern" | "legacy", protocolVersion: string, sessionId?: string): void {
    if (this.#metric) this.#metric[McpAttributes.protocolVersion] = protocolVersion;
    if (!this.#span.isRecording()) return;
    this.#span.setAttribute(McpAttributes.protocolVersion, protocolVersion);
    this.#span.setAttribute(OwnAttributes.era, era);
    if (sessionId) this.#span.setAttribute(McpAttributes.sessionId, sessionId);
  }

  /** Sets an attribute on the span only. */
  set(key: string, value: AttributeValue): void {
    if (this.#span.isRecording()) this.#span.setAttribute(key, value);
  }

  /** Records an event on the span (a round asked for input, a task was created…). */
  event(name: string, attributes?: Attributes): void {
    if (this.#span.isRecording()) this.#span.addEvent(name, attributes);
  }

  /** Runs `fn` inside the span's context, so spans the handler starts are its children. */
  run<T>(fn: () => T): T {
    return otel()!.context.with(this.context, fn);
  }

  /** Ends the span and records the duration, once. */
  end(outcome: Outcome = {}): void {
    if (this.#ended) return;
    this.#ended = true;
    const metric = this.#metric;
    // Propagate mode: nothing of ours to end or record.
    if (metric === undefined) return;
    const failure = this.#span.isRecording() ? this.#recordOutcome(outcome) : failureOf(outcome);
    if (failure.type) {
      metric[McpAttributes.errorType] = failure.type;
      if (failure.code !== undefined) metric[McpAttributes.statusCode] = failure.code;
    }
    this.#span.end();
    this.#telemetry
      .histogram(
        "mcp.server.operation.duration",
        "MCP request or notification duration as observed on the receiver",
      )
      .record((performance.now() - this.#started) / 1000, metric);
  }

  /** Records the outcome on a span the sampler kept: its failure, and a result not final. */
  #recordOutcome(outcome: Outcome): ReturnType<typeof failureOf> {
    const resultType = outcome.result?.resultType;
    if (typeof resultType === "string" && resultType !== "complete")
      this.#span.setAttribute(OwnAttributes.resultType, resultType);
    return recordFailure(this.#span, outcome);
  }

  /**
   * Ends the operation from an HTTP answer the dispatcher did not give (an initialize, a session
   * method, a refusal): its JSON-RPC error, if its body has one.
   */
  endWithBody(body: string | null): void {
    if (this.#ended) return;
    let message: unknown;
    try {
      message = body ? JSON.parse(body) : undefined;
    } catch {
      message = undefined;
    }
    const answer = message as { error?: { code: number; message: string }; result?: JsonObject };
    this.end({ error: answer?.error, result: answer?.result });
  }
}
