/**
 * `--mode search`: the highest open-loop rate at which at least `target` % of requests meet
 * every SLO. Each probe is a short open-loop level. From the starting rate the rate grows 4-fold until
 * a probe fails (or halves until one passes): from 1 req/s a server of 1,000 is passed in 6. Then
 * the bracket between the highest passing rate and the lowest failing one is narrowed until it is
 * within `precision` or the probes run out: a probe the server fell behind on says what it finished
 * per second while saturated, about its capacity, so the next probes go just under and just over
 * that estimate (the bracket then closes in two); without one (a server that kept up but missed
 * the SLOs), where the pass share crosses the target is interpolated once both ends say something,
 * else the bracket is bisected. A probe
 * whose pass rate lies within `margin` points of the target is measured once more (at the same
 * rate, nudged by 0.01 % so each probe stays its own level) and the two are averaged. Pure: the
 * next probe is a function of the probes so far, so a resumed search continues where it stopped.
 */
import type { LevelResult, ResultDocument, SweepConfig } from "../../schema/v1.ts";
import { maxOf, minOf } from "../../shared/extremes.ts";
import { MIN_PROBE_S } from "../load/level-plan.ts";
import { AGENT_SEARCH_METHOD, agentCapacityOf } from "./agent-capacity.ts";

type Saturation = NonNullable<ResultDocument["saturation"]>;

export interface Probe {
  rate: number;
  passPct: number;
  /** A probe the server fell behind on: the requests per second it finished while saturated. */
  deliveredRps?: number | null;
  /** A passing probe: what it delivered in its steady window per second, when under its rate. */
  passedRps?: number | null;
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

/** Probes at (nearly) one rate as one: their mean pass rate, the least any of them delivered. */
function byRate(probes: readonly Probe[]): Probe[] {
  const out: { rate: number; sum: number; n: number; passed: number | null }[] = [];
  for (const p of probes) {
    const hit = out.find((o) => same(o.rate, p.rate));
    const passed = p.passedRps ?? null;
    if (hit) {
      hit.sum += p.passPct;
      hit.n++;
      if (passed !== null) hit.passed = hit.passed === null ? passed : Math.min(hit.passed, passed);
    } else out.push({ rate: p.rate, sum: p.passPct, n: 1, passed });
  }
  return out.map((o) => ({ rate: o.rate, passPct: o.sum / o.n, passedRps: o.passed }));
}

export interface Bracket {
  lo: number | null;
  hi: number | null;
}

/**
 * The highest passing rate and the lowest failing one. A passing probe counts at what it
 * delivered when that was under its rate (a probe a little over capacity can pass a short window
 * while falling behind by too little to show): the answer is never above it, so neither is the
 * bracket's low end.
 */
export function bracketOf(probes: readonly Probe[], target: number): Bracket {
  const rates = byRate(probes);
  const fails = rates.filter((p) => p.passPct < target).map((p) => p.rate);
  const hi = fails.length > 0 ? minOf(fails) : null;
  const passes = rates
    .filter((p) => p.passPct >= target && (hi === null || p.rate < hi))
    .map((p) => Math.min(p.rate, p.passedRps ?? p.rate));
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
  if (hi === null) return maxOf(probes.map((p) => p.rate)) * GROWTH;
  if (lo === null) return minOf(probes.map((p) => p.rate)) / 2;
  const precision = o.precision ?? 0.03;
  if ((hi - lo) / hi <= precision) return null;
  // The capacity the failing probes showed (the lowest among them) in or near the bracket: a probe
  // at half the precision under it and one at half over it close the bracket.
  const inside = (r: number) => r > lo * 1.001 && r < hi * 0.999 && !probes.some((p) => same(p.rate, r));
  const shown = probes
    .filter(
      (p) => p.passPct < o.targetPassPct && p.deliveredRps != null && p.deliveredRps > lo * (1 - precision),
    )
    .map((p) => Math.min(p.deliveredRps!, hi));
  if (shown.length > 0) {
    const est = minOf(shown);
    const under = est * (1 - precision / 2);
    const over = est * (1 + precision / 2);
    if (lo < under * 0.999 && inside(under)) return under;
    // A probe offered at or above `over` that passed (delivering less, so `lo` sits under it)
    // already answered what `over` would ask.
    const passedAbove = probes.some((p) => p.passPct >= o.targetPassPct && p.rate >= over * 0.999);
    if (hi > over * 1.001 && inside(over) && !passedAbove) return over;
    // Passed at or over the estimate: a short probe cannot see an overload of a few % (at 1.5 %
    // over, a 4 s probe's queue grows by about two requests), so the next step is just above the
    // highest pass, not back out toward the far end.
    const step = lo * (1 + precision);
    if (lo >= under * 0.999 && inside(step)) return step;
  }
  // Where the pass share crosses the target, interpolated between the bracket's ends while the
  // passing end's share says something (under 100 %: a share that stays at 100 until a cliff
  // would hold the interpolation at that end), kept a tenth of the bracket inside; else bisected.
  const at = (rate: number) =>
    byRate(probes).find((p) => same(p.rate, rate) || same(p.passedRps ?? 0, rate))?.passPct ?? 100;
  const pLo = at(lo);
  const pHi = at(hi);
  if (pLo < 100 && pLo > pHi) {
    const t = Math.min(0.9, Math.max(0.1, (pLo - o.targetPassPct) / (pLo - pHi)));
    const next = lo + (hi - lo) * t;
    if (inside(next)) return next;
  }
  return (lo + hi) / 2;
}

/** How fast the rate grows before the first probe fails. */
const GROWTH = 4;

/**
 * A probe as the search judges it: by what it delivered. A probe passes only from a steady
 * window (results/steady.ts) whose requests met the SLOs at the target share; one whose queue
 * grew (fewer finished than arrived, beyond the arrival noise) or that never settled fails at
 * that rate, whatever share of its early requests met the SLOs.
 */
export function probeOf(l: LevelResult): Probe {
  const s = l.steady_state;
  const passPct = s !== undefined && !s.steady ? 0 : (l.slo_pass_pct ?? 0);
  return {
    rate: l.level,
    passPct,
    deliveredRps: s?.fell_behind ? s.completed_rps : null,
    passedRps: s?.steady && s.completed_rps !== null ? s.completed_rps : null,
  };
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
  if (search.tier)
    return {
      max_rate_rps: null,
      bracket_rps: [null, null],
      pass_pct_at_max: null,
      goodput_at_max_rps: null,
      target_pass_pct: search.target_pass_pct,
      probes: levels.length,
      max_probes: search.max_probes,
      method: AGENT_SEARCH_METHOD,
      agents: agentCapacityOf(levels, search.tier),
    };
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
    max_probes: search.max_probes,
    method: `open-loop probes of at least ${MIN_PROBE_S} s each: the rate grows 4-fold from the start until a probe fails (or halves until one passes), then the bracket between the highest passing and the lowest failing rate is narrowed to 3 % (just under and just over the rate a probe the server fell behind on finished, else where the pass share crosses the target) or until the probes run out; a probe passes only from a steady window in which the target share of its requests met every SLO and the server kept up with the arrivals (a probe whose queue grew or that never settled fails); the answer is the rate the highest passing probe delivered; a probe within 2 points of the target is measured twice and averaged`,
  };
}
