import type { Attributes, AttributeValue, Context, Span } from "@opentelemetry/api";
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
import { metaOf, metaSetter, type Telemetry } from "./telemetry.js";

/** Where a request goes: an HTTP endpoint, or a peer on the other end of a pipe. */
export interface Destination {
  transport: "tcp" | "pipe";
  serverAddress?: string;
  serverPort?: number;
  protocolVersion?: string;
  sessionId?: string;
}

/**
 * The CLIENT span and duration of one request or notification we send: by `McpClient`, or by a
 * server asking its client (elicitation, sampling, roots). Its context travels in the message's
 * `params._meta`, so the peer's SERVER span is its child (conventions: context propagation).
 */
export class ClientOperation {
  /** The span active in its parent's context: what the transport's own spans go under. */
  readonly context: Context;
  readonly #telemetry: Telemetry;
  /** Ours; in propagate mode, or when the sampler drops it, one that records nothing. */
  readonly #span: Span;
  /** The duration metric's attributes; none in propagate mode. */
  readonly #metric: Attributes | undefined;
  readonly #started = performance.now();
  #ended = false;

  /**
   * Starts the span under `parent`, the active context by default. A caller that crosses
   * `await`s without an async context manager (browsers) passes the context it captured.
   */
  constructor(
    telemetry: Telemetry,
    message: { method: string; id?: RequestId; params?: JsonObject },
    destination: Destination,
    parent: Context = otel()!.context.active(),
  ) {
    this.#telemetry = telemetry;
    if (!telemetry.full) {
      // Propagate mode: no span of ours; the parent's context is what travels to the peer.
      this.#span = otelNoops()!.span;
      this.#metric = undefined;
      this.context = parent;
      return;
    }
    // The sampler is given what it may decide on (method, tool or prompt, server); the rest is
    // built only for a span it keeps. Two objects, each built afresh (see describeOperation).
    const { spanName, attributes } = describeOperation(message.method, message.params);
    this.#metric = describeOperation(message.method, message.params).attributes;
    for (const target of [this.#metric, attributes]) {
      if (destination.serverAddress !== undefined) {
        target["server.address"] = destination.serverAddress;
        if (destination.serverPort !== undefined) target["server.port"] = destination.serverPort;
      }
    }
    this.#metric["network.transport"] = destination.transport;
    if (destination.transport === "tcp") this.#metric["network.protocol.name"] = "http";
    if (destination.protocolVersion)
      this.#metric["mcp.protocol.version"] = destination.protocolVersion;
    this.#span = telemetry.tracer.startSpan(
      spanName,
      { kind: otel()!.SpanKind.CLIENT, attributes },
      parent,
    );
    if (this.#span.isRecording()) describeSpan(this.#span, message, destination);
    this.context = otel()!.trace.setSpan(parent, this.#span);
  }

  /**
   * The span's context, for the peer: `params` with it in `_meta` (a copy; `params` unchanged).
   * When the propagator writes nothing (no SDK registered), `params` as they were, so the
   * message is byte for byte what it would be without telemetry.
   */
  inject(params: JsonObject | undefined): JsonObject {
    const carrier: JsonObject = {};
    otel()!.propagation.inject(this.context, carrier, metaSetter);
    if (Object.keys(carrier).length === 0) return params ?? {};
    return { ...params, _meta: { ...metaOf(params), ...carrier } };
  }

  /** Sets an attribute on the span only (the metric keeps its low-cardinality set). */
  set(key: string, value: AttributeValue): void {
    if (this.#span.isRecording()) this.#span.setAttribute(key, value);
  }

  /** Ends the span and records the duration, once. */
  end(outcome: Outcome = {}): void {
    if (this.#ended) return;
    this.#ended = true;
    const metric = this.#metric;
    // Propagate mode: nothing of ours to end or record.
    if (metric === undefined) return;
    const failure = this.#span.isRecording()
      ? recordOutcome(this.#span, outcome)
      : failureOf(outcome);
    if (failure.type) metric[McpAttributes.errorType] = failure.type;
    if (failure.code !== undefined) metric[McpAttributes.statusCode] = failure.code;
    this.#span.end();
    this.#telemetry
      .histogram(
        "mcp.client.operation.duration",
        "MCP request or notification duration as observed on the sender",
      )
      .record((performance.now() - this.#started) / 1000, metric);
  }

  /** Ends from an error thrown instead of an answer: a JSON-RPC error, or a local failure. */
  endWithError(error: unknown): void {
    this.end(thrownOutcome(error));
  }
}

/**
 * The span of one logical request that may take several round trips (a multi round-trip
 * `tools/call`, `prompts/get` or `resources/read`, and the task a call may become): each round
 * is a CLIENT span of its own under it, so every round's SERVER span lands in one trace even
 * when the app started none, and each round's duration leaves out the time spent answering
 * input. Kind INTERNAL, named like the operation; it records no metric (the rounds do).
 */
export class ClientCall {
  /** The context the rounds start in: the call's span active. */
  readonly context: Context;
  readonly #span: Span;
  #rounds = 0;

  constructor(
    telemetry: Telemetry,
    message: { method: string; params?: JsonObject },
    parent: Context = otel()!.context.active(),
  ) {
    if (!telemetry.full) {
      this.#span = otelNoops()!.span;
      this.context = parent;
      return;
    }
    const { spanName, attributes } = describeOperation(message.method, message.params);
    this.#span = telemetry.tracer.startSpan(
      spanName,
      { kind: otel()!.SpanKind.INTERNAL, attributes },
      parent,
    );
    const uri = resourceUriOf(message.method, message.params);
    if (uri !== undefined && this.#span.isRecording())
      this.#span.setAttribute(McpAttributes.resourceUri, uri);
    this.context = otel()!.trace.setSpan(parent, this.#span);
  }

  /** Counts a round trip and returns its number (1 for the first). */
  nextRound(): number {
    this.#rounds += 1;
    return this.#rounds;
  }

  /** Ends the call with its final outcome; `mcp_mount.round` holds the rounds it took. */
  end(outcome: Outcome): void {
    if (this.#span.isRecording()) {
      this.#span.setAttribute(OwnAttributes.round, this.#rounds);
      recordFailure(this.#span, outcome);
    }
    this.#span.end();
  }

  /** Ends from an error thrown instead of a result. */
  endWithError(error: unknown): void {
    this.end(thrownOutcome(error));
  }
}

/** The attributes of a CLIENT span the sampler kept, beyond those it was started with. */
function describeSpan(
  span: Span,
  message: { method: string; id?: RequestId; params?: JsonObject },
  destination: Destination,
): void {
  span.setAttribute(McpAttributes.networkTransport, destination.transport);
  if (destination.transport === "tcp") span.setAttribute(McpAttributes.networkProtocolName, "http");
  if (destination.protocolVersion)
    span.setAttribute(McpAttributes.protocolVersion, destination.protocolVersion);
  if (message.id !== undefined) span.setAttribute(McpAttributes.requestId, String(message.id));
  if (destination.sessionId) span.setAttribute(McpAttributes.sessionId, destination.sessionId);
  const uri = resourceUriOf(message.method, message.params);
  if (uri !== undefined) span.setAttribute(McpAttributes.resourceUri, uri);
}

/** Records the outcome on a span the sampler kept: its failure, and a result not final. */
function recordOutcome(span: Span, outcome: Outcome): ReturnType<typeof failureOf> {
  const failure = recordFailure(span, outcome);
  const resultType = outcome.result?.resultType;
  if (typeof resultType === "string" && resultType !== "complete")
    span.setAttribute(OwnAttributes.resultType, resultType);
  return failure;
}

/** The outcome of an error thrown instead of an answer: a JSON-RPC error, or a local failure. */
function thrownOutcome(error: unknown): Outcome {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "number") return { exception: error };
  return { error: { code, message: (error as Error).message ?? String(error) } };
}
