/**
 * A level's split from the server's `/metrics`, where its streams carry no timings of their own
 * (vLLM, SGLang): the difference of each per-request histogram's sum and count between two
 * scrapes is the mean time the requests the server finished between them spent in that phase.
 * The scrapes are the last at or before the steady window's start and the first at or after its
 * end (else the level's first and last), so the difference covers the window and at most one
 * scrape interval either side. Pure.
 */
import type { LevelResult } from "../../schema/v1.ts";
import type { HistogramSnapshot, RunningSum, ServerPhase } from "../server/server-histograms.ts";

type Means = NonNullable<LevelResult["server_means"]>;

/** The snapshots a difference is taken between, or null with fewer than two. */
function around(
  snaps: readonly HistogramSnapshot[],
  window: { startMs: number; endMs: number } | null,
): { a: HistogramSnapshot; b: HistogramSnapshot } | null {
  if (snaps.length < 2) return null;
  if (window === null) return { a: snaps[0]!, b: snaps[snaps.length - 1]! };
  let a = snaps[0]!;
  for (const s of snaps) if (s.t_ms <= window.startMs) a = s;
  const b = snaps.find((s) => s.t_ms >= window.endMs) ?? snaps[snaps.length - 1]!;
  return b.t_ms > a.t_ms ? { a, b } : null;
}

/** The change of one running sum, or null where either side lacks it or it went back (a restart). */
function delta(a: RunningSum | undefined, b: RunningSum | undefined): RunningSum | null {
  if (a === undefined || b === undefined) return null;
  const d = { sum: b.sum - a.sum, count: b.count - a.count };
  return d.count < 0 || d.sum < 0 ? null : d;
}

/**
 * The server's mean time per phase over the level's steady window (or the whole level without
 * one), or undefined where it exports none of the histograms or counted no request in between.
 */
export function serverMeans(
  snaps: readonly HistogramSnapshot[],
  window: { startMs: number; endMs: number } | null,
): Means | undefined {
  const pair = around(snaps, window);
  if (pair === null) return undefined;
  const d = (p: ServerPhase) => delta(pair.a.phases[p], pair.b.phases[p]);
  const mean = (p: ServerPhase) => {
    const x = d(p);
    return x !== null && x.count > 0 ? (1000 * x.sum) / x.count : null;
  };
  const counted = d("e2e") ?? d("ttft") ?? d("queue");
  if (counted === null || counted.count === 0) return undefined;
  const ca = pair.a.cache;
  const cb = pair.b.cache;
  const queries = ca && cb ? cb.queries - ca.queries : 0;
  const hits = ca && cb ? cb.hits - ca.hits : 0;
  return {
    source: "metrics",
    window: window === null ? "level" : "steady",
    from_ms: pair.a.t_ms,
    to_ms: pair.b.t_ms,
    requests: counted.count,
    queue_ms: mean("queue"),
    prefill_ms: mean("prefill"),
    decode_ms: mean("decode"),
    ttft_ms: mean("ttft"),
    e2e_ms: mean("e2e"),
    prefix_cache_hit_pct: queries > 0 && hits >= 0 && hits <= queries ? (100 * hits) / queries : null,
  };
}

/** The queue histogram's change over the whole level (its first and last scrape that have it). */
export function levelQueueDelta(snaps: readonly HistogramSnapshot[]): RunningSum | null {
  const with_ = snaps.filter((s) => s.phases.queue !== undefined);
  return with_.length < 2 ? null : delta(with_[0]!.phases.queue, with_[with_.length - 1]!.phases.queue);
}
