import type { Attributes, Link, Span } from "@opentelemetry/api";
import type { TaskRecord } from "../../../store/types.js";
import { describeOperation, type Outcome, OwnAttributes } from "../../../telemetry/attributes.js";
import { recordFailure } from "../../../telemetry/failure.js";
import { otel } from "../../../telemetry/otel.js";
import { type ServerOperation, spanContextOf } from "../../../telemetry/server-operation.js";
import type { Telemetry } from "../../../telemetry/telemetry.js";

/**
 * Records on a request's SERVER span that it created a task (its `mcp_mount.result_type`,
 * `task`, comes from the CreateTaskResult when the dispatcher ends the span).
 */
export function recordTaskCreated(
  operation: ServerOperation | undefined,
  record: TaskRecord,
): void {
  if (!operation) return;
  operation.set(OwnAttributes.taskId, record.id);
  operation.event("task created", { [OwnAttributes.taskId]: record.id });
}

/**
 * Records on a `tasks/get`'s SERVER span that it found the task's work abandoned by its process,
 * and either ran it again here (`task restarted`) or marked it failed (`task abandoned`).
 */
export function recordTaskRecovered(
  operation: ServerOperation | undefined,
  record: TaskRecord,
): void {
  const name = record.status === "failed" ? "task abandoned" : "task restarted";
  operation?.event(name, { [OwnAttributes.taskId]: record.id });
}

/** The span context a stored W3C `traceparent` names, when it is well formed. */
function linkOf(traceparent: string | undefined): Link[] {
  const linked = traceparent === undefined ? undefined : spanContextOf(traceparent);
  return linked ? [{ context: linked }] : [];
}

/** The operation's attributes with the task's id (added in place: no spread on a hot path). */
function withTaskId(attributes: Attributes, taskId: string): Attributes {
  attributes["mcp_mount.task.id"] = taskId;
  return attributes;
}

/**
 * The span of one run of a task's work. INTERNAL, not SERVER: the work answers no message (the
 * `tools/call` that created the task was answered, by its own SERVER span, with the task's
 * handle), so it must not count as a request. It starts a trace of its own, linked to the
 * creating call through the record's `traceparent`: a run may last an hour, happen again after
 * its process died, and run on a process the call never reached.
 */
export class TaskRunSpan {
  readonly #span: Span;

  constructor(telemetry: Telemetry, record: TaskRecord, tool: string) {
    const { spanName, attributes } = describeOperation("tools/call", { name: tool });
    this.#span = telemetry.tracer.startSpan(spanName, {
      kind: otel()!.SpanKind.INTERNAL,
      root: true,
      links: linkOf(record.traceparent),
      attributes: withTaskId(attributes, record.id),
    });
  }

  /** Runs `fn` with the span active, so spans the tool's handler starts are its children. */
  run<T>(fn: () => T): T {
    const { context, trace } = otel()!;
    return context.with(trace.setSpan(context.active(), this.#span), fn);
  }

  /**
   * Ends the span with how the run ended: ERROR with `error.type` for a JSON-RPC error (its
   * code), an `isError` result (`tool_error`) or an exception (a store write that failed, say).
   */
  end(outcome: Outcome): void {
    recordFailure(this.#span, outcome);
    this.#span.end();
  }
}
