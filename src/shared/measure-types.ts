/** What a measure is: its family, unit, direction and names (the catalogue lists them). Pure. */
import type { LevelResult } from "../schema/v1.ts";

export type Direction = "lower" | "higher";

export type SplitSource = "server_timings" | "metrics";

/**
 * What a measure is made of, so a reason a level is not valid names the measures it leaves
 * without a verdict: client timings (latency), rates over the level's window (rate), errors,
 * SLO outcomes (slo), token counts (tokens), the GPU tool's figures (gpu), a search's answer.
 */
export type MeasureFamily = "latency" | "rate" | "errors" | "slo" | "tokens" | "gpu" | "search";
export const MEASURE_FAMILIES: readonly MeasureFamily[] = [
  "latency",
  "rate",
  "errors",
  "slo",
  "tokens",
  "gpu",
  "search",
];

export interface MeasureDef {
  name: string;
  family: MeasureFamily;
  unit: string;
  direction: Direction;
  /** Human name for comments, charts and badges, e.g. "TTFT p95". */
  label: string;
  description: string;
  /**
   * A part of other measures' changes (TTFT p95's queue, prefill, client): stored and trended,
   * never a row of its own; the verdict engine hangs it on those measures' rows as the change's
   * split (row-splits.ts).
   */
  part_of?: readonly string[];
  /**
   * Where a part comes from: the server's per-request timings (the default: parts that sum to the
   * row's own figure) or its /metrics histograms (means over the window: they explain the row's
   * change, they do not sum to it). A row takes the per-request parts where both sides have them.
   */
  split_source?: SplitSource;
}

/**
 * Shares of requests (error rate, SLO pass) change in percentage points, judged per request by
 * an exact test; every other measure changes by a ratio, judged on its logarithm.
 */
export function isShare(def: Pick<MeasureDef, "name">): boolean {
  return def.name === "error_rate" || def.name === "slo_pass_pct";
}

export type LevelValue = (l: LevelResult) => number | null;
