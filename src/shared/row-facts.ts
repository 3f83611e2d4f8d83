/**
 * What the verdict engine reads of the runs for one row: a run's value of a key, the counts
 * behind a share, the finish reasons, the validity reasons that leave a row without a verdict,
 * and how finely a figure is known. Pure.
 */
import type { LevelFacts, Reason, RunFigures } from "./evidence.ts";
import type { MeasureDef } from "./measures.ts";
import type { ShareCounts } from "./row-stats.ts";

export const keyOf = (benchmark: string, measure: string) => `${benchmark}\u0000${measure}`;

/** A run's value of a key, or undefined. */
export function runValue(run: RunFigures, key: string): number | undefined {
  for (const p of run.points) if (keyOf(p.benchmark, p.measure) === key) return p.value;
  return undefined;
}

export function indexRuns(runs: readonly RunFigures[]): Map<string, number>[] {
  return runs.map((r) => new Map(r.points.map((p) => [keyOf(p.benchmark, p.measure), p.value])));
}

/** A run's values as `indexRuns` has them, less those of a level whose validity covers the measure. */
export function indexValidRuns(
  runs: readonly RunFigures[],
  defOf: (measure: string) => MeasureDef | undefined,
): Map<string, number>[] {
  return runs.map(
    (r) =>
      new Map(
        r.points
          .filter((p) => {
            const def = defOf(p.measure);
            return !(def && r.facts.get(p.benchmark)?.reasons.some((x) => covers(x, def)));
          })
          .map((p) => [keyOf(p.benchmark, p.measure), p.value]),
      ),
  );
}

/** A reason covers a measure when it names its family or the measure itself. */
export const covers = (r: Reason, def: MeasureDef) =>
  r.affects.includes(def.family) || r.affects.includes(def.name);

/** How finely a figure is known: a ms latency to the client's 1 ms timer clock, a window rate to one token of its count. */
export function resolutionOf(def: MeasureDef, value: number, facts: LevelFacts | undefined): number {
  if (def.unit === "ms") return 1;
  if (def.family === "rate" && facts) return value / Math.max(1, facts.tokens);
  if (def.family === "tokens") return 1;
  return 0;
}

export function shareCounts(
  def: MeasureDef,
  runs: readonly RunFigures[],
  benchmark: string,
  key: string,
): ShareCounts {
  let bad = 0;
  let of = 0;
  for (const r of runs) {
    const f = r.facts.get(benchmark);
    const v = runValue(r, key);
    if (!f || v === undefined) continue;
    if (def.name === "error_rate") {
      bad += f.errors;
      of += f.requests;
    } else {
      bad += Math.round(f.sloJudged * (1 - v / 100));
      of += f.sloJudged;
    }
  }
  return { bad, of };
}

/** A level's finish reasons, pooled over runs, as shares. */
function finishShares(runs: readonly RunFigures[], benchmark: string): Map<string, number> | null {
  const tot = new Map<string, number>();
  let n = 0;
  for (const r of runs) {
    const f = r.facts.get(benchmark)?.finish;
    if (!f) return null;
    for (const [k, v] of Object.entries(f)) {
      tot.set(k, (tot.get(k) ?? 0) + v);
      n += v;
    }
  }
  if (n === 0) return null;
  return new Map([...tot].map(([k, v]) => [k, v / n]));
}

/** "stop 100 % → length 62 %" when a level's finish reasons moved by more than 10 points. */
export function finishDiffers(
  base: readonly RunFigures[],
  head: readonly RunFigures[],
  benchmark: string,
): string | null {
  const a = finishShares(base, benchmark);
  const b = finishShares(head, benchmark);
  if (!a || !b) return null;
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  const worst = keys.reduce(
    (w, k) =>
      Math.abs((b.get(k) ?? 0) - (a.get(k) ?? 0)) > Math.abs((b.get(w) ?? 0) - (a.get(w) ?? 0)) ? k : w,
    keys[0]!,
  );
  if (Math.abs((b.get(worst) ?? 0) - (a.get(worst) ?? 0)) <= 0.1) return null;
  const fmt = (m: Map<string, number>) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${(100 * v).toFixed(0)} %`)
      .join(", ");
  return `finish reasons differ: ${fmt(a)} → ${fmt(b)}`;
}

/** Each validity reason in a few words, for counts ("6 gated rows not judged: head client-bound at c=1, c=4"). */
export const REASON_LABEL: Readonly<Record<string, string>> = {
  client_bound: "client-bound",
  fell_behind: "the server fell behind",
  no_steady_state: "no steady state",
  error_rate: "too many errors",
  short_output: "outputs shorter than asked",
  cache_unasked: "cached tokens not asked for",
  load_shape: "another load than asked",
  too_few_samples: "too few samples for the percentile",
  telemetry_gap: "a telemetry gap",
  buffered_stream: "a stream that came in bursts",
  leak: "a server that kept cancelled requests",
};

/** The short label of why a key cannot be judged on a side, or null. */
export function invalidLabel(runs: readonly RunFigures[], benchmark: string, def: MeasureDef): string | null {
  for (const r of runs) {
    const hit = r.facts.get(benchmark)?.reasons.find((x) => covers(x, def));
    if (hit) return REASON_LABEL[hit.code] ?? hit.code;
  }
  return null;
}

/** Why a key cannot be judged on a side (its level's reasons that cover it), or null. */
export function invalidOn(runs: readonly RunFigures[], benchmark: string, def: MeasureDef): string | null {
  for (const r of runs) {
    const hit = r.facts.get(benchmark)?.reasons.find((x) => covers(x, def));
    if (hit) return hit.text;
  }
  return null;
}
