/**
 * A sweep's "all levels" rows: each ratio measure's geometric mean over the levels every run of a
 * comparison measured and none of them left invalid for it. A change that moves the whole curve
 * (a slower decode, a slower prefill) moves this row by the same amount as each level, with the
 * levels' own noise averaged: the gate's rows for "the curve moved", beside each level's. Pure.
 */
import type { RunFigures } from "./evidence.ts";
import { isShare, MEASURE_BY_NAME, type MeasureDef } from "./measures.ts";
import { covers } from "./row-facts.ts";

export const ALL_LEVELS = "all levels";

/** A run's value of `measure` at each benchmark, where it has a positive one its level does not invalidate. */
function validValues(run: RunFigures, def: MeasureDef): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of run.points) {
    if (p.measure !== def.name || p.level === null || !(p.value > 0)) continue;
    if (run.facts.get(p.benchmark)?.reasons.some((x) => covers(x, def))) continue;
    out.set(p.benchmark, p.value);
  }
  return out;
}

/**
 * The runs with an "all levels" point per ratio measure: over the levels the head runs all have
 * (valid) and every base run has too; a base run without one of them gets none. Two levels at least.
 */
export function withAllLevels(
  head: readonly RunFigures[],
  base: readonly RunFigures[],
): { head: RunFigures[]; base: RunFigures[] } {
  const measures = new Set(head.flatMap((r) => r.points.map((p) => p.measure)));
  const add = new Map<RunFigures, { benchmark: string; measure: string; value: number; level: null }[]>();
  for (const name of measures) {
    const def = MEASURE_BY_NAME.get(name);
    if (!def || isShare(def)) continue;
    const hv = head.map((r) => validValues(r, def));
    const bv = base.map((r) => validValues(r, def));
    let set = [...(hv[0]?.keys() ?? [])].filter((b) => hv.every((m) => m.has(b)));
    // A level most base runs lack would leave none of them a value: keep the levels most have.
    if (bv.length > 0) set = set.filter((b) => bv.filter((m) => m.has(b)).length * 2 > bv.length);
    if (set.length < 2) continue;
    const gm = (m: Map<string, number>) =>
      set.every((b) => m.has(b))
        ? Math.exp(set.reduce((a, b) => a + Math.log(m.get(b)!), 0) / set.length)
        : null;
    [...head, ...base].forEach((r, i) => {
      const v = gm(i < head.length ? hv[i]! : bv[i - head.length]!);
      if (v !== null)
        add.set(r, [...(add.get(r) ?? []), { benchmark: ALL_LEVELS, measure: name, value: v, level: null }]);
    });
  }
  const extend = (r: RunFigures): RunFigures =>
    add.has(r) ? { ...r, points: [...r.points, ...add.get(r)!] } : r;
  return { head: head.map(extend), base: base.map(extend) };
}
