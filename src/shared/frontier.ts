/**
 * The throughput-interactivity frontier of a sweep (CONCEPTS.md §16): one point per valid steady
 * level, output tok/s (per GPU where the GPU telemetry counted the GPUs) against tok/s per user
 * (1000 / the level's median TPOT: the median user's decode speed), the Pareto-optimal points
 * marked; and what the frontier gives at a target speed per user, interpolated linearly between
 * the two frontier points around it, never beyond its ends.
 */
import type { LevelResult, ResultDocument } from "../schema/v1.ts";

export interface FrontierPoint {
  level: number;
  tok_s_per_user: number;
  output_tok_s: number;
  /** Output tok/s over the GPUs the telemetry counted; null without it. */
  output_tok_s_per_gpu: number | null;
  ttft_p90_ms: number | null;
  /** The level's mean GPU power over its window, W (all its GPUs); null without telemetry. */
  power_w: number | null;
  /** No other point is at least as fast per user and at least as fast in total (and better in one). */
  pareto: boolean;
}

export interface FrontierTarget {
  tok_s_per_user: number;
  /** Inside the frontier's span of speeds per user: figures interpolated; outside it: not reached. */
  reached: boolean;
  /** The two frontier levels it lies between (one when it falls on a level). */
  between: number[];
  output_tok_s: number | null;
  output_tok_s_per_gpu: number | null;
  usd_per_m_output_tok: number | null;
  j_per_output_tok: number | null;
  output_tok_per_kwh: number | null;
}

export interface Frontier {
  gpus: number | null;
  points: FrontierPoint[];
  targets: FrontierTarget[];
}

const usable = (l: LevelResult) =>
  l.validity?.status !== "invalid" &&
  l.steady_state?.steady !== false &&
  l.ok > 0 &&
  l.tpot_ms.p50 !== null &&
  l.tpot_ms.p50 > 0;

/** The GPUs a level's telemetry read (the same for every level of a run). */
const gpusOf = (levels: readonly LevelResult[]): number | null => {
  const n = levels.find((l) => (l.gpu?.per_gpu.length ?? 0) > 0)?.gpu?.per_gpu.length;
  return n ?? null;
};

/** Per point: no other point is at least as high on both axes and higher on one. */
export function paretoFlags(pts: readonly { x: number; y: number }[]): boolean[] {
  return pts.map((p) => !pts.some((q) => q !== p && q.x >= p.x && q.y >= p.y && (q.x > p.x || q.y > p.y)));
}

/**
 * Where `x` falls along points sorted by x: the two around it (one when it falls on a point) and
 * how far between them; null outside their span (never extrapolated).
 */
export function bracket(xs: readonly number[], x: number): { a: number; b: number; t: number } | null {
  if (xs.length === 0 || x < xs[0]! || x > xs[xs.length - 1]!) return null;
  const b = xs.findIndex((v) => v >= x);
  const a = xs[b] === x || b === 0 ? b : b - 1;
  return { a, b, t: a === b ? 0 : (x - xs[a]!) / (xs[b]! - xs[a]!) };
}

export function frontierPoints(levels: readonly LevelResult[]): {
  gpus: number | null;
  points: FrontierPoint[];
} {
  const gpus = gpusOf(levels);
  const pts = levels.filter(usable).map((l) => ({
    level: l.level,
    tok_s_per_user: 1000 / l.tpot_ms.p50!,
    output_tok_s: l.output_tok_s,
    output_tok_s_per_gpu: gpus ? l.output_tok_s / gpus : null,
    ttft_p90_ms: l.ttft_ms.p90,
    power_w: l.gpu?.mean_power_w ?? null,
    pareto: false,
  }));
  const flags = paretoFlags(pts.map((p) => ({ x: p.tok_s_per_user, y: p.output_tok_s })));
  pts.forEach((p, i) => {
    p.pareto = flags[i]!;
  });
  pts.sort((a, b) => a.tok_s_per_user - b.tok_s_per_user || a.level - b.level);
  return { gpus, points: pts };
}

/**
 * The frontier at `x` tok/s per user: along the Pareto points ordered by speed per user (their
 * throughput then falls as speed rises), throughput and GPU power each linear in x between the
 * two around it; J per token and $ per million tokens derived from those (never interpolated
 * themselves: they are ratios). Outside the Pareto points' span: not reached.
 */
export function atTarget(
  f: { gpus: number | null; points: readonly FrontierPoint[] },
  x: number,
  hourCostUsd: number | null,
): FrontierTarget {
  const front = f.points.filter((p) => p.pareto);
  const none: FrontierTarget = {
    tok_s_per_user: x,
    reached: false,
    between: [],
    output_tok_s: null,
    output_tok_s_per_gpu: null,
    usd_per_m_output_tok: null,
    j_per_output_tok: null,
    output_tok_per_kwh: null,
  };
  const at = bracket(
    front.map((p) => p.tok_s_per_user),
    x,
  );
  if (at === null) return none;
  const a = front[at.a]!;
  const b = front[at.b]!;
  const t = at.t;
  const lerp = (u: number, v: number) => u + t * (v - u);
  const y = lerp(a.output_tok_s, b.output_tok_s);
  const power = a.power_w !== null && b.power_w !== null ? lerp(a.power_w, b.power_w) : null;
  const j = power !== null && y > 0 ? power / y : null;
  return {
    tok_s_per_user: x,
    reached: true,
    between: a === b ? [a.level] : [a.level, b.level],
    output_tok_s: y,
    output_tok_s_per_gpu: f.gpus ? y / f.gpus : null,
    usd_per_m_output_tok:
      hourCostUsd !== null && f.gpus && y > 0 ? ((hourCostUsd * f.gpus) / (y * 3600)) * 1e6 : null,
    j_per_output_tok: j,
    output_tok_per_kwh: j !== null && j > 0 ? 3.6e6 / j : null,
  };
}

/** A sweep's frontier and its figures at each `--target-tok-s-per-user`; null under two usable levels. */
export function frontierOf(doc: Pick<ResultDocument, "levels" | "config">): Frontier | null {
  const f = frontierPoints(doc.levels);
  if (f.points.length < 2) return null;
  const hourCost = doc.config?.gpu_telemetry?.hour_cost_usd ?? null;
  const targets = (doc.config?.target_tok_s_per_user ?? []).map((x) => atTarget(f, x, hourCost));
  return { ...f, targets };
}
