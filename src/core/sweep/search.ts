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
import { maxOf, minOf } from "../../shared/extremes.ts";
import { MIN_PROBE_S } from "../load/level-plan.ts";

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
  const hi = fails.length > 0 ? minOf(fails) : null;
  const passes = rates.filter((p) => p.passPct >= target && (hi === null || p.rate < hi)).map((p) => p.rate);
  return { lo: passes.length > 0 ? maxOf(passes) : null, hi };
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
  if (hi === null) return maxOf(probes.map((p) => p.rate)) * 2;
  if (lo === null) return minOf(probes.map((p) => p.rate)) / 2;
  if ((hi - lo) / hi <= (o.precision ?? 0.03)) return null;
  return (lo + hi) / 2;
}

/**
 * A probe as the search judges it: by what it delivered. A probe passes only from a steady
 * window (results/steady.ts) whose requests met the SLOs at the target share; one whose queue
 * grew (fewer finished than arrived, beyond the arrival noise) or that never settled fails at
 * that rate, whatever share of its early requests met the SLOs.
 */
export function probeOf(l: LevelResult): Probe {
  const s = l.steady_state;
  const passPct = s !== undefined && !s.steady ? 0 : (l.slo_pass_pct ?? 0);
  return { rate: l.level, passPct };
}

/** The rate a passing probe delivered: what finished in its window per second (never above its target). */
function deliveredRps(l: LevelResult): number {
  const done = l.steady_state?.completed_rps ?? l.open_loop?.achieved_rate_rps ?? l.level;
  return Math.min(l.level, done);
}

/** The outcome of `--mode search`: the saturation point and how it was found. */
export function saturationOf(
  levels: readonly LevelResult[],
  search: NonNullable<SweepConfig["search"]>,
): Saturation {
  const probes = levels.map(probeOf);
  const { lo: loRate, hi } = bracketOf(probes, search.target_pass_pct);
  const atMax = loRate === null ? [] : levels.filter((l) => Math.abs(l.level / loRate - 1) < 0.001);
  const mean = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  // The headline never names more than the passing probe delivered.
  const delivered = mean(atMax.map(deliveredRps));
  const lo = loRate === null ? null : Math.min(loRate, delivered ?? loRate);
  return {
    max_rate_rps: lo,
    bracket_rps: [lo, hi],
    pass_pct_at_max: mean(atMax.map((l) => l.slo_pass_pct ?? 0)),
    goodput_at_max_rps: mean(atMax.map((l) => l.goodput_req_s)),
    target_pass_pct: search.target_pass_pct,
    probes: levels.length,
    method: `open-loop probes of at least ${MIN_PROBE_S} s each: the rate doubles from the start until a probe fails (or halves until one passes), then the bracket between the highest passing and the lowest failing rate is bisected to 3 % or until the probes run out; a probe passes only from a steady window in which the target share of its requests met every SLO and the server kept up with the arrivals (a probe whose queue grew or that never settled fails); the answer is the rate the highest passing probe delivered; a probe within 2 points of the target is measured twice and averaged`,
  };
}
