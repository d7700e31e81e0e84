import { fixed } from "../report.js";
import { median } from "../stats.js";
import type { ChangeBatch } from "./changes.js";
import type { RequestSample, WireBytes } from "./requests.js";
import type { StreamKind } from "./sse.js";
import type { MemoryRound } from "./streams.js";

// What one capacity run measured, as its tables read it and its JSON keeps it.

/** Traffic: modern tools/call, or warm legacy tools/call on initialized sessions. */
export type Era = "modern" | "legacy";

/** One timed window: one era on one process or on all of them. */
export interface RequestRecord {
  rep: number;
  concurrency: number;
  era: Era;
  /** 1, or the cluster's processes (client-side round-robin). */
  processes: number;
  sample: RequestSample;
}

/** Everything one run measured. */
export interface CapacityRun {
  machine: string;
  cores: number;
  processes: number;
  loadBefore: number[];
  loadAfter: number[];
  concurrency: number[];
  requests: RequestRecord[];
  wire: Record<Era, WireBytes>;
  memory: MemoryRound[];
  /** Changes heard by no stream (their fixed cost), by listen streams, by legacy GET streams. */
  changes: Record<StreamKind | "none", ChangeBatch[]>;
  processBudgetBytes: number;
  redisBudgetBytes: number;
  linkBytesPerSecond: number;
}

/** Both eras, in table order. */
export const ERAS: readonly Era[] = ["modern", "legacy"];

/** "median (min–max)" of `values`, or "—" when there are none. */
export const spread = (values: number[], digits: number) =>
  values.length === 0
    ? "—"
    : `${fixed(median(values), digits)} (${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)})`;

/** A count with thousands separators, or "unbounded". */
export const whole = (n: number) =>
  Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "unbounded";
