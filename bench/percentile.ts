/** Percentiles of latency samples (kept apart from load.ts so that the open-loop generator loads no npm package). */

/** The `p`th percentile of ascending `sorted` (nearest rank). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}
