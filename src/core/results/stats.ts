/**
 * Summary statistics on raw samples, with the one percentile method of src/shared/statistics.ts
 * (Hyndman & Fan type 7). Exact; n is always reported beside the value.
 */
import type { Stats } from "../../schema/v1.ts";
import { percentileSorted } from "../../shared/statistics.ts";

export function percentile(values: readonly number[], q: number): number | null {
  return percentileSorted(Float64Array.from(values).sort(), q);
}

export function summarize(values: readonly number[]): Stats {
  const n = values.length;
  if (n === 0) return { n: 0, mean: null, min: null, max: null, p50: null, p90: null, p95: null, p99: null };
  const s = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += s[i]!;
  return {
    n,
    mean: sum / n,
    min: s[0]!,
    max: s[n - 1]!,
    p50: percentileSorted(s, 0.5),
    p90: percentileSorted(s, 0.9),
    p95: percentileSorted(s, 0.95),
    p99: percentileSorted(s, 0.99),
  };
}
