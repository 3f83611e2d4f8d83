/**
 * A trend chart of one measure of one benchmark on one testbed: a branch's points over the base
 * branch's, the band the base branch's recent valid runs give (where the next run is expected if
 * nothing changed), change points of the base branch. The repository page draws one per measure;
 * a pull request's page draws its key measures.
 */
import type { ChangePointsResponse, SeriesResponse } from "../shared/api-types.ts";
import { mean, predictionInterval } from "../shared/statistics.ts";
import { trendSpec } from "../shared/trend-spec.ts";
import { api, chart, esc } from "./common.ts";

export const TREND_MEASURES = [
  "output_tok_s",
  "ttft_p95_ms",
  "itl_p50_ms",
  "tpot_p50_ms",
  "goodput_req_s",
  "error_rate",
];
/** A run-wide benchmark's own measure (a search's answer, the server's start): its one trend. */
export function trendMeasures(benchmark: string): string[] {
  if (benchmark.startsWith("agent capacity ")) return ["agent_sessions"];
  if (benchmark === "search saturation") return ["saturation_rps"];
  if (benchmark === "server startup") return ["startup_s", "startup_first_token_s", "startup_warm_s"];
  return TREND_MEASURES;
}
export const BASELINE_N = 10;

export interface TrendOf {
  repo: string;
  benchmark: string;
  measure: string;
  /** The testbed's fingerprint. */
  testbed: string;
  branch: string;
  baseBranch: string;
}

const seriesOf = (o: TrendOf, branch: string) =>
  api<SeriesResponse>(
    `/api/v1/repos/${o.repo}/series?${new URLSearchParams({ benchmark: o.benchmark, measure: o.measure, testbed: o.testbed, branch, limit: "100" })}`,
  );

/** One trend card, appended to `grid` at once (the page keeps its order) and drawn when its series comes. */
export async function drawTrend(grid: HTMLElement, o: TrendOf): Promise<void> {
  const div = document.createElement("div");
  div.className = "card trend";
  div.dataset.measure = o.measure;
  grid.appendChild(div);
  const s = await seriesOf(o, o.branch);
  const label = s.measure.label ?? o.measure;
  if (s.points.length === 0) {
    div.innerHTML = `<h3>${esc(label)}</h3><p class="empty">no data</p>`;
    return;
  }
  // A branch other than the base: its points drawn over the base branch's, the band the base's.
  const onBase = o.branch === o.baseBranch;
  const base = onBase ? null : await seriesOf(o, o.baseBranch);
  // Each point's verdict is the one its run was given when it arrived (the engine's, with the
  // run's own rules): the comment's, the badge's and this chart's are the same.
  const pts = s.points.map((p) => ({
    ...p,
    verdict: p.valid === 0 ? "not_judged" : (p.verdict ?? "none"),
    href: `/runs/${p.run_id}`,
  }));
  const validOf = (xs: typeof s.points) => xs.filter((p) => p.valid !== 0);
  const last = onBase
    ? validOf(s.points)
        .slice(-BASELINE_N - 1, -1)
        .map((p) => p.value)
    : validOf(base!.points)
        .slice(-BASELINE_N)
        .map((p) => p.value);
  const band =
    last.length > 0
      ? (([lo, hi]) => ({ lo, hi, mean: mean(last), runs: last.length, of: o.baseBranch }))(
          predictionInterval(last),
        )
      : null;
  const cps = await api<ChangePointsResponse>(
    `/api/v1/repos/${o.repo}/change-points?${new URLSearchParams({ benchmark: o.benchmark, measure: o.measure, testbed: o.testbed, branch: o.baseBranch })}`,
  ).catch(() => null);
  const changes = (cps?.change_points ?? []).map((c) => ({
    created_at: c.created_at,
    label: `${c.delta_pct === null ? "" : `${c.delta_pct > 0 ? "+" : ""}${c.delta_pct.toFixed(1)} % `}from run ${c.run_id}`,
  }));
  div.dataset.changePoints = String(changes.length);
  await chart(
    div,
    trendSpec(label, s.measure.unit, pts, band, {
      ...(base
        ? { base: base.points.map((p) => ({ ...p, verdict: p.verdict ?? "none" })), baseName: o.baseBranch }
        : {}),
      changes,
    }),
  );
}
