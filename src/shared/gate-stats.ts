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

/**
 * Draws of the null max-t. Its (1 − α) quantile from D draws has a standard error of about
 * sqrt(α(1 − α)/D) / f(c), f the density there: 0.15 in t units at 2,000 draws (enough to move
 * the gate's power by ten points), 0.02 at 100,000.
 */
const DRAWS = 100_000;

/**
 * The value the largest of a family's one-sided t statistics exceeds with probability `alpha`
 * when nothing changed (single-step max-t: Westfall & Young 1993; Hothorn, Bretz & Westfall 2008),
 * for rows of correlation `corr` (shrunkCorrelation). Found by simulating the statistics
 * themselves, each row's spread estimated from as many jobs (or its measure's pooled blocks) as
 * the real ones, so each spread's own uncertainty is in it too. For Gaussian jobs the numerators
 * and the jobs' sample covariance are independent, the numerators N(0, R) once scaled, and the
 * covariance (times its degrees of freedom ν) Wishart(R, ν), drawn by Bartlett's decomposition
 * (ν ≥ rows) or as a sum of ν outer products (ν < rows): each draw costs O(rows²), not O(rows · jobs).
 * Seeded: one family gives one value on every surface.
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

/** A Gamma(shape, 1) variate (Marsaglia & Tsang 2000; shape < 1 by the boost u^(1/shape)). */
function gammaOf(shape: number, normal: () => number, r: () => number): number {
  if (shape < 1) return gammaOf(shape + 1, normal, r) * Math.max(r(), 1e-300) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = Math.max(r(), 1e-300);
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

function simulate(design: Design, corr: readonly (readonly number[])[], alpha: number): number {
  const k = corr.length;
  const l = cholesky(corr);
  const r = rng(20_261_202);
  const normal = normals(r);
  // ν: the degrees of freedom of each row's spread (a history's n − 1, the pairs' b − 1).
  const nu = design.kind === "history" ? design.n - 1 : design.blocks - 1;
  if (nu < 1) return Number.POSITIVE_INFINITY;
  // Each row's divisor: its own spread (history), or its group's pooled spread (paired).
  const groupOf = new Int32Array(k);
  const groupSize: number[] = [];
  if (design.kind === "paired") {
    let row = 0;
    design.groups.forEach((g, gi) => {
      for (let i = 0; i < g; i++) groupOf[row++] = gi;
      groupSize.push(g);
    });
  } else
    for (let i = 0; i < k; i++) {
      groupOf[i] = i;
      groupSize.push(1);
    }
  const z = new Float64Array(k);
  const g = new Float64Array(k);
  const diag = new Float64Array(k); // W_ii / ν: each row's sample variance
  const pooled = new Float64Array(groupSize.length);
  const la = Array.from({ length: k }, () => new Float64Array(Math.max(k, nu)));
  const a = Array.from({ length: k }, () => new Float64Array(Math.max(k, nu)));
  const bartlett = nu >= k;
  const maxima = new Float64Array(DRAWS);
  for (let d = 0; d < DRAWS; d++) {
    // Numerators: N(0, R).
    for (let i = 0; i < k; i++) g[i] = normal();
    for (let i = 0; i < k; i++) {
      let s = 0;
      const li = l[i]!;
      for (let q = 0; q <= i; q++) s += li[q]! * g[q]!;
      z[i] = s;
    }
    // W = (L A)(L A)ᵀ, A lower triangular (Bartlett: A_ii² ~ χ²(ν − i), A_ij ~ N(0, 1)), or
    // A a k × ν matrix of normals when ν < k; only W's diagonal is needed.
    const cols = bartlett ? k : nu;
    for (let i = 0; i < k; i++) {
      const ai = a[i]!;
      for (let j = 0; j < cols; j++)
        ai[j] = bartlett
          ? j < i
            ? normal()
            : j === i
              ? Math.sqrt(2 * gammaOf((nu - i) / 2, normal, r))
              : 0
          : normal();
    }
    for (let i = 0; i < k; i++) {
      const li = l[i]!;
      const out = la[i]!;
      let w = 0;
      for (let j = 0; j < cols; j++) {
        let s = 0;
        for (let q = bartlett ? j : 0; q <= i; q++) s += li[q]! * a[q]![j]!;
        out[j] = s;
        w += s * s;
      }
      diag[i] = w / nu;
    }
    pooled.fill(0);
    for (let i = 0; i < k; i++) pooled[groupOf[i]!] = pooled[groupOf[i]!]! + diag[i]!;
    let best = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < k; i++) {
      const gi = groupOf[i]!;
      const t = z[i]! / Math.sqrt(pooled[gi]! / groupSize[gi]!);
      if (t > best) best = t;
    }
    maxima[d] = best;
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
