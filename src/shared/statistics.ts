/**
 * The statistics behind every verdict (the engine is shared/verdict.ts): means and spreads,
 * Student's t from the regularized incomplete beta function, the prediction band the dashboard
 * draws, the one percentile, and the bootstrap's quantile selection. Pure TypeScript.
 */
import { rng } from "./random.ts";

/** The band of a history (the dashboard's trend): its percentage below `minPoints` points. */
export interface Thresholds {
  /** Used when there are fewer than `minPoints` baseline points: |delta| above this % is a change. */
  pct: number;
  /** Two-sided confidence of the prediction interval. */
  confidence: number;
  /** Minimum baseline points for the t-test prediction interval. */
  minPoints: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { pct: 5, confidence: 0.95, minPoints: 5 };

/**
 * The largest magnitude of `xs`, to divide by before summing: no finite input overflows a sum
 * (two values of 1e308 add up to Infinity, their mean does not). 1 when there is nothing to scale.
 */
export function scaleOf(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) if (Math.abs(x) > s) s = Math.abs(x);
  return s > 0 && Number.isFinite(s) ? s : 1;
}

export function mean(xs: readonly number[]): number {
  const s = scaleOf(xs);
  return (xs.reduce((a, b) => a + b / s, 0) / xs.length) * s;
}

/** Sample standard deviation (n - 1), computed on the scaled values. */
export function stddev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const s = scaleOf(xs);
  const m = mean(xs) / s;
  return Math.sqrt(xs.reduce((a, x) => a + (x / s - m) ** 2, 0) / (xs.length - 1)) * s;
}

/** ln Γ(x), Lanczos approximation (Numerical Recipes' gammln); coefficients as published. */
const LANCZOS = [
  76.18009172947146, -86.50532032941678, 24.01409824083091, -1.231739572450155, 0.001208650973866179,
  -0.000005395239384953,
];
function logGamma(x: number): number {
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const ci of LANCZOS) ser += ci / ++y;
  return -tmp + Math.log((2.5066282746310007 * ser) / x);
}

function betacf(a: number, b: number, x: number): number {
  const MAXIT = 200;
  const EPS = 3e-14;
  const FPMIN = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < FPMIN) d = FPMIN;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAXIT; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < FPMIN) d = FPMIN;
    c = 1 + aa / c;
    if (Math.abs(c) < FPMIN) c = FPMIN;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < FPMIN) d = FPMIN;
    c = 1 + aa / c;
    if (Math.abs(c) < FPMIN) c = FPMIN;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const bt = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return (bt * betacf(a, b, x)) / a;
  return 1 - (bt * betacf(b, a, 1 - x)) / b;
}

/** CDF of Student's t with `df` degrees of freedom. */
export function tCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * incompleteBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Quantile of Student's t (bisection on the CDF; exact to ~1e-10). */
export function tQuantile(p: number, df: number): number {
  if (p <= 0 || p >= 1) throw new RangeError("p must be in (0, 1)");
  let lo = -1e3;
  let hi = 1e3;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The band a new observation must leave to count as a change. n >= minPoints: Student-t
 * prediction interval mean ± t(1 - (1 - conf)/2, n - 1) · s · sqrt(1 + 1/n); a (numerically) flat
 * history still tolerates the percentage threshold. Fewer points: mean ± pct %.
 */
export function predictionInterval(
  base: readonly number[],
  th: Thresholds = DEFAULT_THRESHOLDS,
): [number, number] {
  const n = base.length;
  const m = mean(base);
  const pctHalf = (Math.abs(m) * th.pct) / 100;
  if (n < th.minPoints) return [m - pctHalf, m + pctHalf];
  const s = stddev(base);
  const t = tQuantile(1 - (1 - th.confidence) / 2, n - 1);
  const flat = s <= Math.abs(m) * 1e-9;
  const half = flat ? pctHalf : t * s * Math.sqrt(1 + 1 / n);
  return [m - half, m + half];
}

/**
 * The one percentile of tokenbench: linear interpolation between closest ranks (Hyndman & Fan
 * type 7, numpy's default). For sorted x[0..n-1] and q in [0,1], h = (n-1)q,
 * p = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). Exact: no sketches or histograms.
 */
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

/** Type-7 percentile of an unsorted sample; NaN when it is empty. */
export function quantile(xs: ArrayLike<number>, q: number): number {
  return percentileSorted(Float64Array.from(xs as number[]).sort(), q) ?? Number.NaN;
}

/**
 * Type-7 quantile of `a` by selection (Hoare's quickselect, O(n)): reorders `a` in place. The
 * bootstrap takes 2,000 quantiles of each pair, so a sort per quantile was most of its time.
 */
export function selectQuantile(a: Float64Array, q: number): number {
  const n = a.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * Math.min(1, Math.max(0, q));
  const k = Math.floor(h);
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  const x = a[k]!;
  const frac = h - k;
  if (frac === 0 || k + 1 >= n) return x;
  // The next order statistic is the smallest value right of k (the selection left it there).
  let next = Number.POSITIVE_INFINITY;
  for (let m = k + 1; m < n; m++) if (a[m]! < next) next = a[m]!;
  return x + frac * (next - x);
}

/**
 * Percentile bootstrap of quantile(head) - quantile(base): resample both per-request samples
 * with replacement `iterations` times (seeded); returns the central `confidence` interval.
 */
export function bootstrapQuantileDiff(
  base: readonly number[],
  head: readonly number[],
  q: number,
  opts: { iterations?: number; confidence?: number; seed?: number } = {},
): [number, number] {
  const B = opts.iterations ?? 1000;
  const conf = opts.confidence ?? 0.95;
  const r = rng(opts.seed ?? 1);
  const diffs = new Float64Array(B);
  const bs = new Float64Array(base.length);
  const hs = new Float64Array(head.length);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < bs.length; i++) bs[i] = base[Math.floor(r() * base.length)]!;
    for (let i = 0; i < hs.length; i++) hs[i] = head[Math.floor(r() * head.length)]!;
    diffs[b] = selectQuantile(hs, q) - selectQuantile(bs, q);
  }
  const alpha = (1 - conf) / 2;
  return [quantile(diffs, alpha), quantile(diffs, 1 - alpha)];
}
