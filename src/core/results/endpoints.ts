/**
 * `--base-url A,B`: a level's figures per server, from the records the client tagged with the
 * server each went to, and from each server's own /metrics; the imbalance of the work between them.
 */
import type {
  LevelEndpoints,
  LevelResult,
  MetricsSample,
  RequestRecord,
  SweepConfig,
} from "../../schema/v1.ts";
import { maxOf } from "../../shared/extremes.ts";
import { deriveRequest } from "../../shared/formulas.ts";
import { percentile } from "./stats.ts";
import { tokensInWindow } from "./steady.ts";

const meanOf = (xs: readonly number[]): number | null =>
  xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;

/** Means over the samples inside the steady window when some are (the scrapes before and after the load read idle), else all. */
function metricsMeans(all: readonly MetricsSample[] | undefined, w: LevelResult["steady_state"]) {
  if (all === undefined || all.length === 0) return null;
  const inside =
    w?.steady && w.window_start_ms !== null && w.window_end_ms !== null
      ? all.filter((s) => s.t_ms >= w.window_start_ms! && s.t_ms <= w.window_end_ms!)
      : [];
  const samples = inside.length > 0 ? inside : all;
  const of = (f: (s: MetricsSample) => number | null) =>
    meanOf(samples.map(f).filter((v): v is number => v !== null));
  return {
    running_mean: of((s) => s.running),
    waiting_mean: of((s) => s.waiting),
    kv_cache_usage_pct_mean: of((s) => s.kv_cache_usage_pct),
  };
}

/**
 * The level per server: its measured requests (not the warmup, the ramp or the streams the client
 * cancelled on purpose), their output tokens per second as the level's own rate is taken (its
 * steady window's, else over its wall time: the servers' rates sum to it), TTFT and E2E of the
 * successful ones, and its /metrics means. Imbalance: the busiest server's output tokens over an
 * even share (the level's tokens / servers), minus 1.
 */
export function endpointFigures(
  endpoints: NonNullable<SweepConfig["endpoints"]>,
  records: readonly RequestRecord[],
  level: Pick<LevelResult, "wall_time_s" | "steady_state">,
  perEndpointMetrics: readonly (readonly MetricsSample[])[],
): LevelEndpoints {
  // the rate as the level's own: a steady level's from its window (tokens received in it)
  const w = level.steady_state;
  const rate = (rs: readonly RequestRecord[], tokens: number) =>
    w?.steady && w.window_start_ms !== null && w.window_end_ms !== null && w.window_s > 0
      ? rs.reduce(
          (a, r) => a + (r.error === null ? tokensInWindow(r, w.window_start_ms!, w.window_end_ms!) : 0),
          0,
        ) / w.window_s
      : level.wall_time_s > 0
        ? tokens / level.wall_time_s
        : 0;
  const measured = records.filter((r) => !r.warmup && !r.ramp && r.error?.code !== "cancelled");
  const by_endpoint = endpoints.base_urls.map((base_url, i) => {
    const rs = measured.filter((r) => (r.endpoint ?? 0) === i);
    const ok = rs.filter((r) => r.error === null).map(deriveRequest);
    const ttft = ok.map((d) => d.ttftMs).filter((v): v is number => v !== null);
    const e2e = ok.map((d) => d.e2eMs).filter((v): v is number => v !== null);
    const tokens = rs.reduce((a, r) => a + (r.error === null ? (r.usage?.completion_tokens ?? 0) : 0), 0);
    return {
      base_url,
      requests: rs.length,
      errors: rs.filter((r) => r.error !== null).length,
      requests_pct: measured.length === 0 ? 0 : (100 * rs.length) / measured.length,
      output_tokens: tokens,
      output_tok_s: rate(rs, tokens),
      ttft_p50_ms: percentile(ttft, 0.5),
      ttft_p95_ms: percentile(ttft, 0.95),
      e2e_p50_ms: percentile(e2e, 0.5),
      e2e_p95_ms: percentile(e2e, 0.95),
      metrics: metricsMeans(perEndpointMetrics[i], w),
    };
  });
  const total = by_endpoint.reduce((a, e) => a + e.output_tokens, 0);
  const busiest = maxOf(by_endpoint.map((e) => e.output_tokens));
  return {
    strategy: endpoints.strategy,
    imbalance: total === 0 ? null : busiest / (total / by_endpoint.length) - 1,
    by_endpoint,
  };
}
