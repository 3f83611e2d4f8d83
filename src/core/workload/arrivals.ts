/**
 * Seeded randomness and open-loop arrival processes. Arrival times are computed up front as
 * absolute offsets from the level start, so the sender never accumulates drift.
 */
export type ArrivalKind = "poisson" | "constant" | "gamma";

import { rng } from "../../shared/random.ts";

export { rng };

export function normal(r: () => number): number {
  const u = 1 - r();
  const v = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Gamma(shape k, scale theta) by Marsaglia & Tsang. */
export function gamma(r: () => number, k: number, theta: number): number {
  if (k < 1) {
    const u = r();
    return gamma(r, k + 1, theta) * u ** (1 / k);
  }
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(r);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = r();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v * theta;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * theta;
  }
}

/**
 * Inter-arrival gaps in ms for a mean rate of `rateRps`.
 * poisson: exponential gaps. constant: 1000/rate exactly. gamma: shape = burstiness,
 * scale = 1/(rate*burstiness), so the mean rate is unchanged; burstiness < 1 is burstier than
 * Poisson, > 1 smoother, = 1 is Poisson.
 */
export function arrivalOffsetsMs(opts: {
  kind: ArrivalKind;
  rateRps: number;
  burstiness: number;
  seed: number;
  count?: number;
  durationS?: number;
}): number[] {
  const r = rng(opts.seed);
  const meanGapMs = 1000 / opts.rateRps;
  const out: number[] = [];
  let t = 0;
  const limitMs = opts.durationS !== undefined ? opts.durationS * 1000 : Number.POSITIVE_INFINITY;
  const maxCount = opts.count ?? Number.POSITIVE_INFINITY;
  // First arrival at t = 0: a level starts with a request, as a real arrival stream observed from its start.
  while (out.length < maxCount) {
    if (t >= limitMs) break;
    out.push(t);
    let gap: number;
    if (opts.kind === "constant") gap = meanGapMs;
    else if (opts.kind === "poisson") gap = -Math.log(1 - r()) * meanGapMs;
    else gap = gamma(r, opts.burstiness, meanGapMs / opts.burstiness);
    t += gap;
  }
  return out;
}
