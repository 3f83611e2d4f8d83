/**
 * One row's statistics, by the evidence at hand (shared/verdict.ts picks the method; CONCEPTS.md
 * §13 says what each sees). A ratio measure is judged on the logarithm of its figures (a change
 * is a ratio; run-to-run noise is multiplicative), a share of requests in percentage points.
 * Each returns the change, a two-sided interval on it, and where the method can gate, the
 * one-sided statistic in the bad direction with its standard error. Pure.
 */

import { fisherUpperP } from "./gate-stats.ts";
import { rng } from "./random.ts";
import type { Grouped } from "./samples.ts";
import { mean, quantile, selectQuantile, stddev, tQuantile } from "./statistics.ts";

export type Unit = "request" | "repeat" | "job" | "block";

/** A ratio measure's statistics: everything on log(head / base). */
export interface LogStat {
  /** log(head / base) as the method estimates it. */
  centre: number;
  /** Half-width of the two-sided interval on `centre` at the asked confidence. */
  half: number;
  /** Standard error of `centre` and its degrees of freedom (null: not a t method). */
  se: number | null;
  df: number | null;
  /** The runs' noise (coefficient of variation, %), where 2+ runs give one. */
  noisePct: number | null;
  /** Residuals of each job or block (log), for the family's correlation. */
  residuals: number[] | null;
  /** An interval not centred on `centre` (the bootstrap's percentiles), in place of ± half. */
  interval?: [number, number];
}

const logs = (xs: readonly number[]) => xs.map((x) => Math.log(x));

/** The smallest spread a figure can be said to have: half its resolution, as a log ratio. */
export const floorLog = (resolution: number, value: number) =>
  value > 0 && resolution > 0 ? Math.log1p(resolution / value) / 2 : 0;

/**
 * One head job against a history of n jobs: the Student-t prediction interval for one new job,
 * log(head) − mean ± t(1 − α/2, n − 1) · s · sqrt(1 + 1/n), s at least the figure's floor.
 */
export function historyStat(
  base: readonly number[],
  head: number,
  floor: number,
  confidence: number,
): LogStat {
  const b = logs(base);
  const n = b.length;
  const m = mean(b);
  const s = Math.max(stddev(b), floor);
  const se = s * Math.sqrt(1 + 1 / n);
  const df = n - 1;
  return {
    centre: Math.log(head) - m,
    half: tQuantile(1 - (1 - confidence) / 2, df) * se,
    se,
    df,
    noisePct: cvPct(base),
    residuals: b.map((x) => x - m),
  };
}

/**
 * Pairs of blocks of one job (A/B): the mean of log(head_b / base_b) over the pairs, its spread
 * pooled over the rows of one measure (the `pooled` sum of squares and degrees of freedom), at
 * least the figure's floor. The job's own effect is in both blocks of a pair and cancels.
 */
export function pairedStat(
  diffs: readonly number[],
  pooled: { ss: number; df: number },
  floor: number,
  confidence: number,
): LogStat {
  const b = diffs.length;
  const m = mean(diffs);
  const s = Math.max(pooled.df > 0 ? Math.sqrt(pooled.ss / pooled.df) : 0, floor);
  const se = s / Math.sqrt(b);
  return {
    centre: m,
    half: tQuantile(1 - (1 - confidence) / 2, Math.max(1, pooled.df)) * se,
    se,
    df: Math.max(1, pooled.df),
    noisePct: 100 * s,
    residuals: diffs.map((d) => d - m),
  };
}

/** A paired row's contribution to its measure's pooled spread. */
export function pairedSs(diffs: readonly number[]): { ss: number; df: number } {
  const m = mean(diffs);
  return { ss: diffs.reduce((a, d) => a + (d - m) ** 2, 0), df: diffs.length - 1 };
}

/**
 * Repeats of one job on either side (Welch's t on the logs; one base run is taken to have the
 * head's spread, Var = s²(1 + 1/m)): within-job evidence, blind to what the job shares.
 */
export function repeatsStat(
  base: readonly number[],
  head: readonly number[],
  floor: number,
  confidence: number,
): LogStat {
  const b = logs(base);
  const h = logs(head);
  const v = (xs: number[]) => Math.max(stddev(xs), floor) ** 2;
  let se: number;
  let df: number;
  if (b.length >= 2 && h.length >= 2) {
    const x = v(h) / h.length;
    const y = v(b) / b.length;
    se = Math.sqrt(x + y);
    df = (x + y) ** 2 / ((x * x) / (h.length - 1) + (y * y) / (b.length - 1));
  } else {
    // One run on one side: it is taken to have the other side's spread (same testbed, same job).
    const many = h.length >= 2 ? h : b;
    se = Math.sqrt(v(many) * (1 / h.length + 1 / b.length));
    df = many.length - 1;
  }
  return {
    centre: mean(h) - mean(b),
    half: tQuantile(1 - (1 - confidence) / 2, df) * se,
    se: null,
    df: null,
    noisePct: cvPct(head.length >= 2 ? head : base),
    residuals: null,
  };
}

/** Requests of a sample, each a group of values (one, or a request's ITL gaps). */
function groupsOf(s: Grouped): Float64Array[] {
  if (!s.sizes) return s.values.map((v) => Float64Array.of(v));
  const out: Float64Array[] = [];
  let i = 0;
  for (const n of s.sizes) {
    out.push(Float64Array.from(s.values.slice(i, i + n)));
    i += n;
  }
  return out;
}

function resample(groups: readonly Float64Array[], r: () => number, buf: Float64Array): Float64Array {
  let k = 0;
  for (let g = 0; g < groups.length; g++) {
    const pick = groups[Math.floor(r() * groups.length)]!;
    for (let i = 0; i < pick.length && k < buf.length; i++) buf[k++] = pick[i]!;
  }
  return buf.subarray(0, k);
}

/**
 * One run each side: a percentile bootstrap of the quantile's log ratio, resampling whole
 * requests (a request's ITL gaps together: they move together), seeded. It sees the noise
 * inside each run and nothing between runs, so it never gates.
 */
export function bootstrapStat(
  base: Grouped,
  head: Grouped,
  o: { iterations: number; confidence: number; seed: number },
): LogStat | null {
  const bg = groupsOf(base);
  const hg = groupsOf(head);
  const qb = quantile(base.values, base.q);
  const qh = quantile(head.values, head.q);
  if (!(qb > 0 && qh > 0)) return null;
  const r = rng(o.seed);
  const diffs = new Float64Array(o.iterations);
  const bufB = new Float64Array(base.values.length * 2 + 16);
  const bufH = new Float64Array(head.values.length * 2 + 16);
  for (let i = 0; i < o.iterations; i++) {
    const b = selectQuantile(resample(bg, r, bufB), base.q);
    const h = selectQuantile(resample(hg, r, bufH), head.q);
    diffs[i] = b > 0 && h > 0 ? Math.log(h / b) : 0;
  }
  const a = (1 - o.confidence) / 2;
  const lo = quantile(diffs, a);
  const hi = quantile(diffs, 1 - a);
  const centre = Math.log(qh / qb);
  return {
    centre,
    half: Math.max(centre - lo, hi - centre),
    se: null,
    df: null,
    noisePct: null,
    residuals: null,
    interval: [lo, hi],
  };
}

/**
 * The standard error of one run's quantile on the log scale, from its requests (whole requests
 * resampled, as bootstrapStat does): the noise a run's figure has from its requests alone, which
 * shrinks as 1/√requests. Null where the quantile is not positive.
 */
export function samplingSe(g: Grouped, o: { iterations: number; seed: number }): number | null {
  const groups = groupsOf(g);
  const q = quantile(g.values, g.q);
  if (!(q > 0)) return null;
  const r = rng(o.seed);
  const buf = new Float64Array(g.values.length * 2 + 16);
  const logsOf = new Float64Array(o.iterations);
  for (let i = 0; i < o.iterations; i++) {
    const x = selectQuantile(resample(groups, r, buf), g.q);
    logsOf[i] = x > 0 ? Math.log(x) : Math.log(q);
  }
  return stddev([...logsOf]);
}

/** Counts of a share: requests that count against it (errors, SLO misses) out of requests. */
export interface ShareCounts {
  bad: number;
  of: number;
}

/** Wilson's score interval of a share. */
function wilson(k: number, n: number, z: number): [number, number] {
  if (n === 0) return [0, 1];
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = p + (z * z) / (2 * n);
  const w = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [(c - w) / d, (c + w) / d];
}

/**
 * A share's change in percentage points between two counts (head − base, bad share), with
 * Newcombe's interval (from each side's Wilson interval) and the one-sided exact p-values of a
 * rise and of a fall: a request is the unit.
 */
export function shareStat(base: ShareCounts, head: ShareCounts, confidence: number) {
  const z = -normalQ((1 - confidence) / 2);
  const pb = base.of > 0 ? base.bad / base.of : 0;
  const ph = head.of > 0 ? head.bad / head.of : 0;
  const [lb, ub] = wilson(base.bad, base.of, z);
  const [lh, uh] = wilson(head.bad, head.of, z);
  const d = ph - pb;
  return {
    deltaPp: 100 * d,
    intervalPp: [
      100 * (d - Math.sqrt((ph - lh) ** 2 + (ub - pb) ** 2)),
      100 * (d + Math.sqrt((uh - ph) ** 2 + (pb - lb) ** 2)),
    ] as [number, number],
    pRise: fisherUpperP(base.bad, base.of, head.bad, head.of),
    pFall: fisherUpperP(base.of - base.bad, base.of, head.of - head.bad, head.of),
  };
}

/** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function normalQ(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQ(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** The runs' coefficient of variation (%), where 2+ runs give one. */
export function cvPct(xs: readonly number[]): number | null {
  const m = mean(xs);
  return xs.length >= 2 && m !== 0 ? (100 * stddev(xs)) / Math.abs(m) : null;
}
