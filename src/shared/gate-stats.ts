/**
 * The statistics of the gate (shared/gate.ts): the critical value of a one-sided max-t over a
 * family of correlated rows, the rows' common correlation, an exact test for a rise in a share
 * of requests (error rate, SLO pass), and robust outlier flags for a base history. Pure and
 * seeded: every surface that judges a pair computes the same numbers.
 */

import { rng } from "./random.ts";
import { mean, stddev, tQuantile } from "./statistics.ts";

/** A standard normal from two uniforms (Box–Muller). */
export function gaussian(r: () => number): number {
  const u = Math.max(r(), 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

/** Standard normals in pairs from one source (Box–Muller gives two per draw): half the work of gaussian(). */
function normals(r: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const m = Math.sqrt(-2 * Math.log(Math.max(r(), 1e-300)));
    const a = 2 * Math.PI * r();
    spare = m * Math.sin(a);
    return m * Math.cos(a);
  };
}

/**
 * The design a family's statistics came from, which the null simulation repeats exactly:
 *   history  each row's t is (head − mean of n base jobs) / (sd · sqrt(1 + 1/n)), sd per row;
 *   paired   each row's t is mean(d) / (sd / sqrt(b)) over b paired blocks, sd pooled over the
 *            rows of one group (one measure's levels).
 */
export type Design = { kind: "history"; n: number } | { kind: "paired"; blocks: number; groups: number[] };

/**
 * The rows' correlation matrix from their residuals (one list per row over the same jobs or
 * blocks, each signed so that positive is bad), shrunk toward no correlation by as much as its
 * own estimation noise calls for (Schäfer & Strimmer 2005, target the identity): with few jobs
 * the estimate is noisy, and a max-t from a correlation that is too low is only conservative.
 * A row without spread, or fewer than 3 jobs, counts as uncorrelated.
 */
export function shrunkCorrelation(residuals: readonly (readonly number[])[]): {
  r: number[][];
  lambda: number;
} {
  const k = residuals.length;
  const n = residuals[0]?.length ?? 0;
  const eye: number[][] = Array.from({ length: k }, (_, i) =>
    Array.from({ length: k }, (_, j) => (i === j ? 1 : 0)),
  );
  if (n < 3 || residuals.some((x) => x.length !== n)) return { r: eye, lambda: 1 };
  const z = residuals.map((x) => {
    const m = mean(x);
    const sd = stddev(x);
    return sd > 0 ? x.map((v) => (v - m) / sd) : null;
  });
  const r = eye.map((row) => [...row]);
  let varSum = 0;
  let sqSum = 0;
  for (let i = 0; i < k; i++)
    for (let j = i + 1; j < k; j++) {
      const a = z[i];
      const b = z[j];
      if (!a || !b) continue;
      const w = a.map((v, q) => v * b[q]!);
      const wm = mean(w);
      const rij = (wm * n) / (n - 1);
      varSum += (n / (n - 1) ** 3) * w.reduce((acc, x) => acc + (x - wm) ** 2, 0);
      sqSum += rij * rij;
      r[i]![j] = rij;
      r[j]![i] = rij;
    }
  const lambda = sqSum > 0 ? Math.min(1, Math.max(0, varSum / sqSum)) : 1;
  for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) if (i !== j) r[i]![j] = (1 - lambda) * r[i]![j]!;
  return { r, lambda };
}

/** The mean correlation off the diagonal (for the gate's words). */
export function meanCorrelation(r: readonly (readonly number[])[]): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < r.length; i++)
    for (let j = i + 1; j < r.length; j++) {
      s += r[i]![j]!;
      n++;
    }
  return n > 0 ? s / n : 0;
}

/** Cholesky factor of a symmetric positive semi-definite matrix (a little jitter where it is singular). */
function cholesky(a: readonly (readonly number[])[]): Float64Array[] {
  const k = a.length;
  const l = Array.from({ length: k }, () => new Float64Array(k));
  for (let i = 0; i < k; i++)
    for (let j = 0; j <= i; j++) {
      let s = a[i]![j]!;
      for (let q = 0; q < j; q++) s -= l[i]![q]! * l[j]![q]!;
      if (i === j) l[i]![i] = Math.sqrt(Math.max(s, 1e-9));
      else l[i]![j] = s / l[j]![j]!;
    }
  return l;
}

/** Draws of the null max-t: its 95th percentile then sits within about 2 % of itself. */
const DRAWS = 2000;

/**
 * The value the largest of a family's one-sided t statistics exceeds with probability `alpha`
 * when nothing changed (single-step max-t: Westfall & Young 1993; Hothorn, Bretz & Westfall 2008),
 * for rows of correlation `corr` (shrunkCorrelation). Found by simulating the statistics
 * themselves: Gaussian rows of that correlation, each row's mean and spread estimated from as
 * many jobs (or its measure's pooled blocks) as the real ones, so each spread's own uncertainty
 * is in it too. Seeded: one family gives one value on every surface.
 */
export function maxTCritical(design: Design, corr: readonly (readonly number[])[], alpha: number): number {
  const size = corr.length;
  if (size < 1) return Number.POSITIVE_INFINITY;
  // One history judges several heads (a PR's repeats, the dashboard's pages): the same family
  // gives the same value, so the last few are kept.
  const key = JSON.stringify([design, alpha, corr.map((row) => row.map((x) => Math.round(x * 1e6)))]);
  const hit = RECENT.get(key);
  if (hit !== undefined) return hit;
  const c = simulate(design, corr, alpha);
  if (RECENT.size >= 32) RECENT.delete(RECENT.keys().next().value!);
  RECENT.set(key, c);
  return c;
}

const RECENT = new Map<string, number>();

function simulate(design: Design, corr: readonly (readonly number[])[], alpha: number): number {
  const size = corr.length;
  const l = cholesky(corr);
  const normal = normals(rng(20_261_202));
  const g = new Float64Array(size);
  const draw = (out: Float64Array) => {
    for (let i = 0; i < size; i++) g[i] = normal();
    for (let i = 0; i < size; i++) {
      let s = 0;
      const li = l[i]!;
      for (let q = 0; q <= i; q++) s += li[q]! * g[q]!;
      out[i] = s;
    }
  };
  const maxima = new Float64Array(DRAWS);
  if (design.kind === "history") {
    const n = design.n;
    const jobs = Array.from({ length: n + 1 }, () => new Float64Array(size));
    const scale = Math.sqrt(1 + 1 / n);
    for (let d = 0; d < DRAWS; d++) {
      for (const j of jobs) draw(j);
      let best = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < size; i++) {
        let s = 0;
        for (let j = 0; j < n; j++) s += jobs[j]![i]!;
        const m = s / n;
        let v = 0;
        for (let j = 0; j < n; j++) v += (jobs[j]![i]! - m) ** 2;
        const t = (jobs[n]![i]! - m) / (Math.sqrt(v / (n - 1)) * scale);
        if (t > best) best = t;
      }
      maxima[d] = best;
    }
  } else {
    const b = design.blocks;
    const blocks = Array.from({ length: b }, () => new Float64Array(size));
    const means = new Float64Array(size);
    for (let d = 0; d < DRAWS; d++) {
      for (const x of blocks) draw(x);
      let best = Number.NEGATIVE_INFINITY;
      let row = 0;
      for (const gsize of design.groups) {
        let ss = 0;
        for (let i = row; i < row + gsize; i++) {
          let s = 0;
          for (let j = 0; j < b; j++) s += blocks[j]![i]!;
          means[i] = s / b;
          for (let j = 0; j < b; j++) ss += (blocks[j]![i]! - means[i]!) ** 2;
        }
        const sd = Math.sqrt(ss / (gsize * (b - 1)));
        for (let i = row; i < row + gsize; i++) {
          const t = means[i]! / (sd / Math.sqrt(b));
          if (t > best) best = t;
        }
        row += gsize;
      }
      maxima[d] = best;
    }
  }
  maxima.sort();
  return maxima[Math.min(DRAWS - 1, Math.ceil((1 - alpha) * DRAWS) - 1)]!;
}

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

const LOG_F = new Float64Array(5001);
for (let i = 2; i < LOG_F.length; i++) LOG_F[i] = LOG_F[i - 1]! + Math.log(i);
const logF = (n: number) => (n < LOG_F.length ? LOG_F[n]! : logFactorial(n));

/**
 * One-sided p-value that the head's share `kh / nh` is above the base's `kb / nb` by chance:
 * Fisher's exact test (the hypergeometric upper tail given the total), the unit being a request.
 */
export function fisherUpperP(kb: number, nb: number, kh: number, nh: number): number {
  const K = kb + kh;
  const N = nb + nh;
  if (nh === 0 || nb === 0) return 1;
  if (N > 20_000) {
    // Normal approximation of the two-proportion test (the exact sums get long).
    const p = K / N;
    const se = Math.sqrt(p * (1 - p) * (1 / nb + 1 / nh));
    if (se === 0) return kh / nh > kb / nb ? 0 : 1;
    const z = (kh / nh - kb / nb) / se;
    return 0.5 * erfc(z / Math.SQRT2);
  }
  const lnDen = logF(N) - logF(nh) - logF(nb);
  let p = 0;
  for (let x = kh; x <= Math.min(K, nh); x++) {
    const ln = logF(K) - logF(x) - logF(K - x) + logF(N - K) - logF(nh - x) - logF(N - K - nh + x) - lnDen;
    if (N - K - nh + x < 0) continue;
    p += Math.exp(ln);
  }
  return Math.min(1, p);
}

/** Complementary error function (Numerical Recipes' erfcc, |error| < 1.2e-7). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** The smallest head count out of `nh` that the one-sided exact test flags at `alpha` (null: none). */
export function smallestFlagged(kb: number, nb: number, nh: number, alpha: number): number | null {
  for (let kh = 0; kh <= nh; kh++) if (fisherUpperP(kb, nb, kh, nh) < alpha) return kh;
  return null;
}

/**
 * Which runs of a base history are outliers: a run whose rows, each in robust standard deviations
 * (1.4826 · MAD) from its median and signed so that positive is bad, average more than `limit` (6)
 * robust SDs of that average away from the runs' median (a slow run is slow in every row; one
 * row's spike is the row's noise, not the run's). Only with 6 or more runs (fewer cannot tell an
 * outlier from the spread), at most a fifth of them, the most extreme first.
 */
export function outlierRuns(rows: readonly (readonly number[])[], runs: number, limit = 6): Set<number> {
  const out = new Set<number>();
  if (runs < 6) return out;
  const med = (xs: readonly number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const score = new Float64Array(runs);
  let used = 0;
  for (const xs of rows) {
    if (xs.length !== runs) continue;
    const m = med(xs);
    const mad = med(xs.map((x) => Math.abs(x - m)));
    if (!(mad > 0)) continue;
    for (let j = 0; j < runs; j++) score[j] = score[j]! + (xs[j]! - m) / (1.4826 * mad);
    used++;
  }
  if (used === 0) return out;
  const avg = [...score].map((x) => x / used);
  const m = med(avg);
  const mad = med(avg.map((x) => Math.abs(x - m)));
  if (!(mad > 0)) return out;
  const z = avg.map((x) => Math.abs(x - m) / (1.4826 * mad));
  const order = [...z.keys()].filter((j) => z[j]! > limit).sort((a, b) => z[b]! - z[a]!);
  for (const j of order.slice(0, Math.floor(runs / 5))) out.add(j);
  return out;
}

/** Student's t quantile, re-exported for the gate's detectable-change figure. */
export const tQ = (p: number, df: number) => tQuantile(p, df);
