/**
 * `--mode search`: the highest open-loop rate at which at least `target` % of requests meet
 * every SLO. Each probe is a short open-loop level. From the starting rate the rate doubles until a
 * probe fails (or halves until one passes), then the bracket between the highest passing rate and
 * the lowest failing one is bisected until it is within `precision` or the probes run out. A probe
 * whose pass rate lies within `margin` points of the target is measured once more (at the same
 * rate, nudged by 0.01 % so each probe stays its own level) and the two are averaged. Pure: the
 * next probe is a function of the probes so far, so a resumed search continues where it stopped.
 */
import type { LevelResult, ResultDocument, SweepConfig } from "../../schema/v1.ts";

type Saturation = NonNullable<ResultDocument["saturation"]>;

export interface Probe {
  rate: number;
  passPct: number;
}

export interface SearchOptions {
  start: number;
  targetPassPct: number;
  maxProbes: number;
  /** Stop when (hi - lo) / hi is at most this (default 0.03). */
  precision?: number;
  /** Re-measure a probe within this many points of the target (default 2). */
  margin?: number;
}

const NUDGE = 1.0001;
const same = (a: number, b: number) => Math.abs(a / b - 1) < 0.001;

/** Probes at (nearly) one rate as one: their mean pass rate. */
function byRate(probes: readonly Probe[]): Probe[] {
  const out: { rate: number; sum: number; n: number }[] = [];
  for (const p of probes) {
    const hit = out.find((o) => same(o.rate, p.rate));
    if (hit) {
      hit.sum += p.passPct;
      hit.n++;
    } else out.push({ rate: p.rate, sum: p.passPct, n: 1 });
  }
  return out.map((o) => ({ rate: o.rate, passPct: o.sum / o.n }));
}

export interface Bracket {
  lo: number | null;
  hi: number | null;
}

export function bracketOf(probes: readonly Probe[], target: number): Bracket {
  const rates = byRate(probes);
  const fails = rates.filter((p) => p.passPct < target).map((p) => p.rate);
  const hi = fails.length > 0 ? Math.min(...fails) : null;
  const passes = rates.filter((p) => p.passPct >= target && (hi === null || p.rate < hi)).map((p) => p.rate);
  return { lo: passes.length > 0 ? Math.max(...passes) : null, hi };
}

/** The rate of the next probe, or null when the search is done. */
export function nextProbe(probes: readonly Probe[], o: SearchOptions): number | null {
  if (probes.length >= o.maxProbes) return null;
  if (probes.length === 0) return o.start;
  const margin = o.margin ?? 2;
  const last = probes[probes.length - 1]!;
  const repeats = probes.filter((p) => same(p.rate, last.rate)).length;
  if (repeats === 1 && Math.abs(last.passPct - o.targetPassPct) <= margin) return last.rate * NUDGE;
  const { lo, hi } = bracketOf(probes, o.targetPassPct);
  if (hi === null) return Math.max(...probes.map((p) => p.rate)) * 2;
  if (lo === null) return Math.min(...probes.map((p) => p.rate)) / 2;
  if ((hi - lo) / hi <= (o.precision ?? 0.03)) return null;
  return (lo + hi) / 2;
}

/** The outcome of `--mode search`: the saturation point and how it was found. */
export function saturationOf(
  levels: readonly LevelResult[],
  search: NonNullable<SweepConfig["search"]>,
): Saturation {
  const probes = levels.map((l) => ({ rate: l.level, passPct: l.slo_pass_pct ?? 0 }));
  const { lo, hi } = bracketOf(probes, search.target_pass_pct);
  const atMax = lo === null ? [] : levels.filter((l) => Math.abs(l.level / lo - 1) < 0.001);
  const mean = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  return {
    max_rate_rps: lo,
    bracket_rps: [lo, hi],
    pass_pct_at_max: mean(atMax.map((l) => l.slo_pass_pct ?? 0)),
    goodput_at_max_rps: mean(atMax.map((l) => l.goodput_req_s)),
    target_pass_pct: search.target_pass_pct,
    probes: levels.length,
    method:
      "open-loop probes: the rate doubles from the start until a probe fails (or halves until one passes), then the bracket between the highest passing and the lowest failing rate is bisected to 3 % or until the probes run out; a probe within 2 points of the target is measured twice and averaged",
  };
}
