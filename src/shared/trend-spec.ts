/** The dashboard's trend chart (Vega-Lite), beside the run charts of charts.ts. Pure. */
import { BASE, type Spec } from "./charts.ts";
import { maxOf, minOf } from "./extremes.ts";

export interface TrendPoint {
  created_at: string;
  value: number;
  run_id: string;
  commit_sha: string | null;
  verdict?: string;
}

/**
 * Dashboard trend: points over time (dates on the axis), the baseline band compare uses (its
 * subtitle says from how many runs of which branch), the base branch's points under a PR
 * branch's, regressions (▼), points the band does not hold (a ring: every PR point is judged
 * against the band; on the base branch, the newest run) and change points (dashed rules).
 * A layer is drawn only when it has data (an empty layer makes Vega warn "Infinite extent").
 */
export function trendSpec(
  title: string,
  unit: string,
  points: TrendPoint[],
  band: { lo: number; hi: number; mean: number; runs: number; of: string } | null,
  extra: { base?: TrendPoint[]; baseName?: string; changes?: { created_at: string; label: string }[] } = {},
): Spec {
  const layers: Spec[] = [];
  // One spelling per instant: an ordinal axis tells "…30.984Z" and "… 30.984" apart.
  // The axis field is its own (`run_at`): the tooltip's temporal created_at makes Vega-Lite parse
  // that one into a number.
  const iso = <T extends { created_at: string }>(xs: readonly T[]) =>
    xs.map((p) => ({ ...p, run_at: new Date(p.created_at).toISOString() }));
  points = iso(points);
  extra = {
    ...extra,
    ...(extra.base ? { base: iso(extra.base) } : {}),
    ...(extra.changes ? { changes: iso(extra.changes) } : {}),
  };
  // Labels that tell the runs apart (runs uploaded in one go are seconds apart): milliseconds within
  // a minute, seconds within an hour, times within a day, dates with times within a week.
  const times = [...points, ...(extra.base ?? [])].map((p) => Date.parse(p.created_at));
  const spanH = times.length > 1 ? (maxOf(times) - minOf(times)) / 3_600_000 : 0;
  const format =
    spanH <= 1 / 60
      ? "%H:%M:%S.%L"
      : spanH <= 1
        ? "%H:%M:%S"
        : spanH <= 24
          ? "%H:%M"
          : spanH <= 24 * 7
            ? "%b %d %H:%M"
            : "%b %d";
  // One place per run, in time order (an ordinal axis): runs minutes apart and runs seconds apart
  // both get labels of their own; labels that would overlap are left out, never repeated.
  const x = {
    field: "run_at",
    type: "ordinal",
    // The domain given, not unioned from the layers (a union of sorted parts is not sorted).
    scale: {
      domain: [
        ...new Set(
          [...points, ...(extra.base ?? []), ...(extra.changes ?? [])].map(
            (p) => (p as { run_at?: string }).run_at!,
          ),
        ),
      ].sort(),
    },
    title: spanH <= 24 ? "run time (UTC)" : "run date (UTC)",
    axis: {
      labelExpr: `utcFormat(toDate(datum.value), '${format}')`,
      labelAngle: format.length > 6 ? -45 : 0,
      labelOverlap: "greedy",
    },
  };
  const y = {
    field: "value",
    type: "quantitative",
    title: unit && !title.includes(unit) ? `${title} (${unit})` : title,
    scale: { zero: false },
    axis: { format: ".4~g" },
  };
  if (band) {
    layers.push({
      data: { values: [band] },
      mark: { type: "rect", color: "#0366d6", opacity: 0.1 },
      encoding: { y: { field: "lo", type: "quantitative" }, y2: { field: "hi" } },
    });
    layers.push({
      data: { values: [band] },
      mark: { type: "rule", color: "#0366d6", strokeDash: [4, 3] },
      encoding: { y: { field: "mean", type: "quantitative" } },
    });
  }
  if (extra.base && extra.base.length > 0)
    layers.push({
      data: { values: extra.base.map((p) => ({ ...p, series: extra.baseName ?? "base" })) },
      mark: { type: "line", color: "#959da5", point: { size: 20, color: "#959da5" }, tooltip: true },
      encoding: { x, y },
    });
  if (extra.changes && extra.changes.length > 0)
    layers.push({
      data: { values: extra.changes },
      mark: { type: "rule", color: "#e36209", strokeDash: [6, 3], strokeWidth: 1.5 },
      encoding: {
        x,
        tooltip: [{ field: "label", type: "nominal", title: "change point" }],
      },
    });
  layers.push({
    data: { values: points },
    mark: { type: "line", point: { filled: true, size: 40 }, tooltip: true },
    encoding: {
      x,
      y,
      tooltip: [
        { field: "created_at", type: "temporal", title: "time" },
        { field: "value", type: "quantitative", format: ".4~g" },
        { field: "commit_sha", type: "nominal", title: "commit" },
        { field: "verdict", type: "nominal" },
      ],
      href: { field: "href", type: "nominal" },
    },
  });
  const judged = extra.base ? points : points.slice(-1);
  const outside = band ? judged.filter((p) => p.value < band.lo || p.value > band.hi) : [];
  if (outside.length > 0)
    layers.push({
      data: { values: outside.map((p) => ({ ...p, note: "outside the band" })) },
      mark: { type: "point", shape: "circle", size: 260, filled: false, color: "#e36209", strokeWidth: 2 },
      encoding: { x, y: { field: "value", type: "quantitative" }, tooltip: { field: "note" } },
    });
  const regressed = points.filter((p) => p.verdict === "regressed");
  if (regressed.length > 0)
    layers.push({
      data: { values: regressed },
      mark: { type: "point", shape: "triangle-down", size: 160, color: "#d73a49", filled: true },
      encoding: { x, y: { field: "value", type: "quantitative" } },
    });
  const subtitle = band
    ? `band: ${band.runs} run${band.runs === 1 ? "" : "s"} of ${band.of}${outside.length > 0 ? `; ○ ${outside.length} outside it` : ""}`
    : "no band: no earlier runs";
  return { ...BASE, width: "container", height: 220, title: { text: title, subtitle }, layer: layers };
}
