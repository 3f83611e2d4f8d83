/**
 * Summary statistics on raw samples. One percentile method everywhere: linear interpolation
 * between closest ranks (Hyndman & Fan type 7, numpy's default): for sorted x[0..n-1] and
 * q in [0,1], h = (n-1)q, p = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
 * Exact (no sketches or histograms); n is always reported beside the value.
 */
import type { Stats } from "../schema/v1.ts";

export function percentileSorted(sorted: ArrayLike<number>, q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  if (q <= 0) return sorted[0]!;
  if (q >= 1) return sorted[n - 1]!;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const frac = h - lo;
  const a = sorted[lo]!;
  if (frac === 0 || lo + 1 >= n) return a;
  return a + frac * (sorted[lo + 1]! - a);
}

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

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}
