import {
  type Attributes,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { JsonObject, RequestId } from "../protocol/messages.js";
import {
  describeOperation,
  failureOf,
  McpAttributes,
  type Outcome,
  resourceUriOf,
} from "./attributes.js";
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
  readonly #telemetry: Telemetry;
  readonly #span: Span;
  readonly #metric: Attributes;
  readonly #started = performance.now();
  #ended = false;

  constructor(
    telemetry: Telemetry,
    message: { method: string; id?: RequestId; params?: JsonObject },
    destination: Destination,
  ) {
    this.#telemetry = telemetry;
    const { spanName, attributes } = describeOperation(message.method, message.params);
    this.#metric = { ...attributes, [McpAttributes.networkTransport]: destination.transport };
    if (destination.transport === "tcp") this.#metric[McpAttributes.networkProtocolName] = "http";
    if (destination.protocolVersion)
      this.#metric[McpAttributes.protocolVersion] = destination.protocolVersion;
    if (destination.serverAddress !== undefined) {
      this.#metric[McpAttributes.serverAddress] = destination.serverAddress;
      if (destination.serverPort !== undefined)
        this.#metric[McpAttributes.serverPort] = destination.serverPort;
    }
    const spanAttributes: Attributes = { ...this.#metric };
    if (message.id !== undefined) spanAttributes[McpAttributes.requestId] = String(message.id);
    if (destination.sessionId) spanAttributes[McpAttributes.sessionId] = destination.sessionId;
    const uri = resourceUriOf(message.method, message.params);
    if (uri !== undefined) spanAttributes[McpAttributes.resourceUri] = uri;
    this.#span = telemetry.tracer.startSpan(spanName, {
      kind: SpanKind.CLIENT,
      attributes: spanAttributes,
    });
  }

  /** The span's context, for the peer: `params` with it in `_meta` (a copy; `params` unchanged). */
  inject(params: JsonObject | undefined): JsonObject {
    const meta: JsonObject = { ...metaOf(params) };
    propagation.inject(trace.setSpan(context.active(), this.#span), meta, metaSetter);
    return { ...params, _meta: meta };
  }

  /** Ends the span and records the duration, once. */
  end(outcome: Outcome = {}): void {
    if (this.#ended) return;
    this.#ended = true;
    const failure = failureOf(outcome);
    if (failure.type) {
      this.#metric[McpAttributes.errorType] = failure.type;
      this.#span.setAttribute(McpAttributes.errorType, failure.type);
      if (failure.code !== undefined) {
        this.#metric[McpAttributes.statusCode] = failure.code;
        this.#span.setAttribute(McpAttributes.statusCode, failure.code);
      }
      if (outcome.exception instanceof Error) this.#span.recordException(outcome.exception);
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    }
    this.#span.end();
    this.#telemetry
      .histogram(
        "mcp.client.operation.duration",
        "MCP request or notification duration as observed on the sender",
      )
      .record((performance.now() - this.#started) / 1000, this.#metric);
  }

  /** Ends from an error thrown instead of an answer: a JSON-RPC error, or a local failure. */
  endWithError(error: unknown): void {
    const code = (error as { code?: unknown } | undefined)?.code;
    if (typeof code === "number")
      this.end({ error: { code, message: (error as Error).message ?? String(error) } });
    else this.end({ exception: error });
  }
}
