/**
 * The base runs a history is judged with: runs with a valid level (a level that is not valid
 * leaves its own rows, each row judging with the runs whose level is valid), none from before the base branch's
 * last change point (E-divisive, shared/change-points.ts, on each gated measure's mean over its
 * levels), and no outlier run (more than 5 robust SDs from the median in a gated row). What is
 * left out is named with why. Pure.
 */
import { changePoints } from "./change-points.ts";
import type { RunFigures } from "./evidence.ts";
import { outlierRuns } from "./gate-stats.ts";
import { isShare, MEASURE_BY_NAME, type MeasureDef } from "./measures.ts";
import { indexValidRuns } from "./row-facts.ts";

export /** The base runs a history judges with: valid, after the last change point, outliers out. */
function keptHistory(
  runs: readonly RunFigures[],
  gatedKeys: readonly { key: string; def: MeasureDef }[],
  excluded: { run: string; reason: string }[],
): RunFigures[] {
  // A history none of whose runs has a valid level is still the base: each row is then judged,
  // or not, on the runs as one invalid base run is (its level's reasons), where leaving every
  // run out would read as no baseline at all and let the gate pass what it cannot see.
  if (runs.every((r) => r.invalid !== null)) return [...runs];
  let kept = runs.filter((r) => {
    if (r.invalid !== null) excluded.push({ run: r.id, reason: `invalid: ${r.invalid}` });
    return r.invalid === null;
  });
  // The base branch's last change: its history before it is another server's.
  const byMeasure = new Map<string, string[]>();
  for (const g of gatedKeys) byMeasure.set(g.def.name, [...(byMeasure.get(g.def.name) ?? []), g.key]);
  let cut = 0;
  for (const [measure, keys] of byMeasure) {
    const def = MEASURE_BY_NAME.get(measure)!;
    if (isShare(def)) continue;
    const idx = indexValidRuns(kept, (m) => MEASURE_BY_NAME.get(m));
    const series: number[] = [];
    const at: number[] = [];
    idx.forEach((m, j) => {
      const vs = keys.map((k) => m.get(k)).filter((v): v is number => v !== undefined && v > 0);
      if (vs.length === keys.length) {
        series.push(vs.reduce((a, v) => a + Math.log(v), 0) / vs.length);
        at.push(j);
      }
    });
    for (const f of changePoints(series)) cut = Math.max(cut, at[f.index]!);
  }
  if (cut > 0) {
    for (const r of kept.slice(0, cut))
      excluded.push({ run: r.id, reason: `before the base branch's change at run ${kept[cut]!.id}` });
    kept = kept.slice(cut);
  }
  const idx = indexValidRuns(kept, (m) => MEASURE_BY_NAME.get(m));
  const rows = gatedKeys
    .filter((g) => !isShare(g.def))
    .map((g) => idx.map((m) => m.get(g.key)))
    .map((xs, i) => ({
      xs,
      bad: gatedKeys.filter((g) => !isShare(g.def))[i]!.def.direction === "lower" ? 1 : -1,
    }))
    .filter((x): x is { xs: number[]; bad: number } => x.xs.every((v) => v !== undefined && v > 0))
    .map(({ xs, bad }) => xs.map((v) => bad * Math.log(v)));
  const out = outlierRuns(rows, kept.length);
  for (const j of out)
    excluded.push({
      run: kept[j]!.id,
      reason: "an outlier run (more than 5 robust SDs from the history's median)",
    });
  return kept.filter((_, j) => !out.has(j));
}
