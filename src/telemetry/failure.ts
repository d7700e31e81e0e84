import type { Span } from "@opentelemetry/api";
import { otel } from "./otel.js";
import { failureOf, McpAttributes, type Outcome } from "./attributes.js";

/** Marks a span failed (error.type, status code, status ERROR) when the outcome is a failure. */
export function recordFailure(span: Span, outcome: Outcome): ReturnType<typeof failureOf> {
  const failure = failureOf(outcome);
  if (!failure.type) return failure;
  span.setAttribute(McpAttributes.errorType, failure.type);
  if (failure.code !== undefined) span.setAttribute(McpAttributes.statusCode, failure.code);
  if (outcome.exception instanceof Error) span.recordException(outcome.exception);
  // The JSON-RPC message, else the exception's (conventions: span status description).
  const message =
    failure.message ?? (outcome.exception instanceof Error ? outcome.exception.message : undefined);
  span.setStatus({ code: otel()!.SpanStatusCode.ERROR, message });
  return failure;
}
