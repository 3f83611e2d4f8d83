/**
 * The curve verdict's rows (CONCEPTS.md §16): each run's throughput-interactivity frontier, read
 * at the speeds per user both sides cover, becomes three figures per run that the verdict engine
 * judges like any other, by the method the evidence allows (A/B blocks, a base history, repeats):
 *   frontier        the geometric mean, over the common span, of the run's output tok/s at each
 *                   speed per user: "the curve moved", a gated row (the gate's output_tok_s);
 *   ... worst point that figure at the speed where the head's curve is furthest below the base's;
 *   ... best point  and where it is furthest above.
 * Worst and best are chosen after looking at both curves, so their intervals are those of a
 * point fixed in advance and too narrow: they say where, the mean row decides. Pure.
 */
import { ALL_LEVELS } from "./all-levels.ts";
import type { RunFigures } from "./evidence.ts";
import { maxOf, minOf } from "./extremes.ts";
import { bracket, paretoFlags } from "./frontier.ts";
import { isTargetBenchmark, MEASURE_BY_NAME } from "./measures.ts";
import { medianOf } from "./repeats.ts";
import { covers } from "./row-facts.ts";

/** Speeds per user the curve is read at, evenly spaced in log speed across the common span. */
const GRID = 9;
/** A span narrower than this ratio of its ends (5 %) is one speed, not a curve. */
const MIN_SPAN = 1.05;

const FRONTIER = "frontier";
/** Whether a benchmark is one of the curve verdict's rows. */
export const isFrontierRow = (benchmark: string) => benchmark.startsWith(FRONTIER);
/**
 * Rows the default gate leaves out though their measure is in it: the frontier's points chosen
 * after looking (worst, best), and the frontier read at a stated target speed (a point of the
 * curve its mean row already gates; trended and badged).
 */
export const ungated = (benchmark: string) =>
  (/ point /.test(benchmark) && isFrontierRow(benchmark)) || isTargetBenchmark(benchmark);

/**
 * With the frontier's mean row in the comparison, throughput's all-levels row is informational:
 * both say "the curve's throughput moved", and the max-t holding the rate over both paid for a row
 * that added nothing (on the CI-noise model, history of 10, 3 % noise, job share 50 / 80 %, 120
 * PRs: TTFT p50 +10 % caught 55 / 48 % with both gated, 62 / 53 % with the frontier's in place of
 * throughput's, 63 / 61 % with no frontier row; throughput's −10 % 84–90 % in all three).
 */
export const replacedByFrontier = (benchmark: string, measure: string) =>
  benchmark === ALL_LEVELS && measure === "output_tok_s";

const speed = (x: number) => (x >= 100 ? x.toFixed(0) : x.toPrecision(2));

interface Curve {
  /** Speeds per user, ascending, and output tok/s there: the run's Pareto points. */
  xs: number[];
  ys: number[];
}

/** A run's Pareto points from its levels' TPOT p50 and output tok/s, where its level leaves both valid. */
function curveOf(run: RunFigures): Curve | null {
  const tpot = MEASURE_BY_NAME.get("tpot_p50_ms")!;
  const out = MEASURE_BY_NAME.get("output_tok_s")!;
  const byLevel = new Map<string, { x?: number; y?: number }>();
  for (const p of run.points) {
    if (p.level === null || !(p.value > 0) || (p.measure !== tpot.name && p.measure !== out.name)) continue;
    const reasons = run.facts.get(p.benchmark)?.reasons ?? [];
    if (reasons.some((r) => covers(r, tpot) || covers(r, out))) continue;
    const e = byLevel.get(p.benchmark) ?? {};
    if (p.measure === tpot.name) e.x = 1000 / p.value;
    else e.y = p.value;
    byLevel.set(p.benchmark, e);
  }
  const pts = [...byLevel.values()].filter(
    (e): e is { x: number; y: number } => e.x !== undefined && e.y !== undefined,
  );
  const flags = paretoFlags(pts);
  const front = pts.filter((_, i) => flags[i]).sort((a, b) => a.x - b.x);
  return front.length >= 2 ? { xs: front.map((p) => p.x), ys: front.map((p) => p.y) } : null;
}

/** A curve's output tok/s at speed `x`, linear between its two points around it; null outside. */
function readAt(c: Curve, x: number): number | null {
  const at = bracket(c.xs, x);
  return at === null ? null : c.ys[at.a]! + at.t * (c.ys[at.b]! - c.ys[at.a]!);
}

export interface FrontierSpan {
  /** The common span of speeds per user, tok/s per user. */
  lo: number;
  hi: number;
  /** Where the head's curve is furthest below and above the base's (null without a base). */
  worst: number | null;
  best: number | null;
}

/**
 * The runs with their frontier points added (benchmarks "frontier …" with output_tok_s, level
 * null), and the span they were read over. The span: the speeds every head run covers and the
 * median base run covers; a base run that does not cover it all gets no point (never
 * extrapolated). Nothing added under two Pareto points or a span under 5 %.
 */
export function withFrontier(
  head: readonly RunFigures[],
  base: readonly RunFigures[],
): { head: RunFigures[]; base: RunFigures[]; span: FrontierSpan | null } {
  const none = { head: [...head], base: [...base], span: null };
  const hc = head.map(curveOf);
  const bc = base.map(curveOf);
  if (hc.length === 0 || hc.some((c) => c === null)) return none;
  const heads = hc as Curve[];
  const bases = bc.filter((c): c is Curve => c !== null);
  // A base with no curve (no run with two valid Pareto points): the frontier would be a gated row
  // with no baseline standing in for throughput's all-levels row, which stays gated instead.
  if (base.length > 0 && bases.length === 0) return none;
  const lows = heads.map((c) => c.xs[0]!);
  const highs = heads.map((c) => c.xs[c.xs.length - 1]!);
  if (bases.length > 0) {
    // nine in ten base runs cover it: one odd run narrows it no more than it leaves the history
    const at = (xs: number[], q: number) => xs.sort((a, b) => a - b)[Math.round(q * (xs.length - 1))]!;
    lows.push(
      at(
        bases.map((c) => c.xs[0]!),
        0.9,
      ),
    );
    highs.push(
      at(
        bases.map((c) => c.xs[c.xs.length - 1]!),
        0.1,
      ),
    );
  }
  const lo = maxOf(lows);
  const hi = minOf(highs);
  if (!(hi >= lo * MIN_SPAN)) return none;
  const grid = Array.from({ length: GRID }, (_, i) => lo * (hi / lo) ** (i / (GRID - 1)));
  const along = (c: Curve | null) => {
    const ys = c ? grid.map((x) => readAt(c, x)) : [];
    return ys.length === GRID && ys.every((y) => y !== null && y > 0) ? (ys as number[]) : null;
  };
  const hy = heads.map(along);
  const by = bc.map(along);
  const centre = (rows: (number[] | null)[]) => {
    const ok = rows.filter((r): r is number[] => r !== null);
    return ok.length === 0 ? null : grid.map((_, i) => medianOf(ok.map((r) => r[i]!)));
  };
  const hMid = centre(hy);
  const bMid = centre(by);
  let worst: number | null = null;
  let best: number | null = null;
  if (hMid && bMid) {
    const ratio = grid.map((_, i) => hMid[i]! / bMid[i]!);
    worst = ratio.indexOf(minOf(ratio));
    best = ratio.indexOf(maxOf(ratio));
  }
  const range = `${speed(lo)}–${speed(hi)} tok/s per user`;
  const names = {
    mean: `${FRONTIER} ${range}`,
    worst: worst === null ? null : `${FRONTIER} point ${speed(grid[worst]!)} tok/s per user (worst)`,
    best:
      best === null || best === worst
        ? null
        : `${FRONTIER} point ${speed(grid[best]!)} tok/s per user (best)`,
  };
  const extend = (r: RunFigures, ys: number[] | null): RunFigures => {
    if (ys === null) return r;
    const gm = Math.exp(ys.reduce((a, y) => a + Math.log(y), 0) / ys.length);
    const pt = (benchmark: string, value: number) => ({
      benchmark,
      measure: "output_tok_s",
      value,
      level: null,
    });
    return {
      ...r,
      points: [
        ...r.points,
        pt(names.mean, gm),
        ...(names.worst !== null ? [pt(names.worst, ys[worst!]!)] : []),
        ...(names.best !== null ? [pt(names.best, ys[best!]!)] : []),
      ],
    };
  };
  return {
    head: head.map((r, i) => extend(r, hy[i]!)),
    base: base.map((r, i) => extend(r, by[i]!)),
    span: { lo, hi, worst: worst === null ? null : grid[worst]!, best: best === null ? null : grid[best]! },
  };
}
