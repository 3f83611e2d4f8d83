/**
 * Change points in a series of runs, as MongoDB's continuous benchmarking, Hunter and Apache
 * Otava do: E-divisive means proposes where a series splits, a Student-t test decides whether the
 * split is real. Pure; runs in Node and in the Worker.
 *
 * E-divisive (Matteson & James 2014, α = 1): within a segment, the split τ that maximises the
 * energy divergence between the points before and after it,
 *   Q(τ) = m·k/(m + k) · (2·E|a − b| − E|a − a'| − E|b − b'|),
 * with at least `minSegment` points on each side (so one spike is never a change). The split is
 * kept when Student's t-test between the two sides gives p < `pValue`, Bonferroni-corrected for
 * the candidate splits it was chosen from; then both sides are searched again, recursively.
 * Rejected splits end the search in their segment.
 */
import { mean, scaleOf, tCdf } from "./statistics.ts";

export interface ChangePoint {
  /** Index of the first point of the new segment. */
  index: number;
  before_mean: number;
  after_mean: number;
  delta_pct: number | null;
  p_value: number;
}

export interface ChangePointOptions {
  /** Fewest points on each side of a change (default 3). */
  minSegment?: number;
  /** Significance a split must reach, after the correction for the candidates (default 0.01). */
  pValue?: number;
}

export const CHANGE_POINT_DEFAULTS = { minSegment: 3, pValue: 0.01 } as const;

function meanAbsDiff(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (const x of a) for (const y of b) s += Math.abs(x - y);
  return s / (a.length * b.length);
}

function meanAbsWithin(a: readonly number[]): number {
  if (a.length < 2) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) for (let j = i + 1; j < a.length; j++) s += Math.abs(a[i]! - a[j]!);
  return (2 * s) / (a.length * a.length);
}

/** Energy divergence between the two sides of a split (E-divisive's statistic). */
export function energyDivergence(a: readonly number[], b: readonly number[]): number {
  const m = a.length;
  const k = b.length;
  return ((m * k) / (m + k)) * (2 * meanAbsDiff(a, b) - meanAbsWithin(a) - meanAbsWithin(b));
}

function variance(xs: readonly number[]): number {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) ** 2;
  return s / (xs.length - 1);
}

/**
 * Two-sided p-value of Student's t-test (pooled variance) between two samples. Pooled, not
 * Welch: the split that E-divisive picks tends to leave one short, tight side, whose small
 * variance alone would make a noise split look significant.
 */
export function studentP(a: readonly number[], b: readonly number[]): number {
  const n1 = a.length;
  const n2 = b.length;
  const df = n1 + n2 - 2;
  const pooled = ((n1 - 1) * variance(a) + (n2 - 1) * variance(b)) / df;
  const se = Math.sqrt(pooled * (1 / n1 + 1 / n2));
  const diff = mean(a) - mean(b);
  if (se === 0) return diff === 0 ? 1 : 0;
  return 2 * (1 - tCdf(Math.abs(diff / se), df));
}

export function changePoints(values: readonly number[], o: ChangePointOptions = {}): ChangePoint[] {
  // Both tests are scale-free: search the series divided by its largest magnitude, so no finite
  // input overflows their sums, and report the means in the series' own units.
  const scale = scaleOf(values);
  const xs = values.map((x) => x / scale);
  const minSeg = Math.max(2, o.minSegment ?? CHANGE_POINT_DEFAULTS.minSegment);
  const alpha = o.pValue ?? CHANGE_POINT_DEFAULTS.pValue;
  const found: ChangePoint[] = [];
  const search = (lo: number, hi: number) => {
    if (hi - lo < 2 * minSeg) return;
    let best = -1;
    let bestQ = Number.NEGATIVE_INFINITY;
    for (let tau = lo + minSeg; tau <= hi - minSeg; tau++) {
      const q = energyDivergence(xs.slice(lo, tau), xs.slice(tau, hi));
      if (q > bestQ) {
        bestQ = q;
        best = tau;
      }
    }
    if (best < 0) return;
    const a = xs.slice(lo, best);
    const b = xs.slice(best, hi);
    // The split was chosen as the best of the segment's candidates: Bonferroni-correct for them.
    const candidates = hi - lo - 2 * minSeg + 1;
    const p = Math.min(1, studentP(a, b) * candidates);
    if (!(p < alpha)) return;
    const before = mean(a);
    const after = mean(b);
    found.push({
      index: best,
      before_mean: before * scale,
      after_mean: after * scale,
      delta_pct: before !== 0 ? (100 * (after - before)) / Math.abs(before) : null,
      p_value: p,
    });
    search(lo, best);
    search(best, hi);
  };
  search(0, xs.length);
  return found.sort((x, y) => x.index - y.index);
}
