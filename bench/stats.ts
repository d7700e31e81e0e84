/** The median of `values` (NaN when empty). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank `q` quantile (0..1) of ascending `sorted` (NaN when empty). */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** Median, minimum and maximum of a set of paired ratios. */
export interface RatioSummary {
  median: number;
  min: number;
  max: number;
  values: number[];
}

/** Summarises per-rep ratios. */
export function summarizeRatios(values: number[]): RatioSummary {
  return {
    median: median(values),
    min: Math.min(...values),
    max: Math.max(...values),
    values,
  };
}
