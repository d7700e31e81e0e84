import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AttributeValue } from "@opentelemetry/api";
import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** One finished span as a server process of the cluster wrote it: one JSON line per span. */
export interface SpanLine {
  /** The process that ended it. */
  pid: number;
  name: string;
  /** A `SpanKind` of `@opentelemetry/api`. */
  kind: number;
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  attributes: Record<string, AttributeValue | undefined>;
  links: { traceId: string; spanId: string }[];
  /** A `SpanStatusCode` and its description. */
  status: { code: number; message?: string };
  /** The names of its events. */
  events: string[];
}

/** The JSON line of a finished span. */
export function toSpanLine(span: ReadableSpan): SpanLine {
  const { traceId, spanId } = span.spanContext();
  return {
    pid: process.pid,
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: span.attributes,
    links: span.links.map(({ context }) => ({ traceId: context.traceId, spanId: context.spanId })),
    status: span.status,
    events: span.events.map((event) => event.name),
  };
}

/**
 * Appends each span to `file` as it ends. Synchronously: a span is on disk once `end()` returns,
 * so a test that got its answer only waits for the file to be read, and a killed process loses
 * nothing it already ended.
 */
export class JsonLinesSpanProcessor implements SpanProcessor {
  constructor(readonly file: string) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    appendFileSync(this.file, `${JSON.stringify(toSpanLine(span))}\n`);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Every span written so far to the `.jsonl` files in `dir`, whole lines only. */
export function readSpanLines(dir: string): SpanLine[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) => {
      const lines = readFileSync(join(dir, name), "utf8").split("\n");
      // The last piece is empty, or a line still being written.
      return lines.slice(0, -1).map((line) => JSON.parse(line) as SpanLine);
    });
}
