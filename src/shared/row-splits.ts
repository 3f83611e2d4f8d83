/**
 * Why a row moved: a measure with parts (measures whose `part_of` names it) gets each part's mean
 * over the base runs and over the head runs at its level, from the same runs its own figures came
 * from. Two sources, one way: TTFT p50 and p95 split into queue, prefill and client by the
 * server's per-request timings (parts that sum to each run's figure), else TTFT and E2E rows
 * explained by the server's own mean phases over the window from its /metrics histograms (queue,
 * prefill, decode: means, which move with the row but need not sum to it). The difference between
 * the row's change and its parts' is said as the rest, never spread over the parts. Pure.
 */
import type { RunFigures } from "./evidence.ts";
import type { MeasureDef, SplitSource } from "./measure-types.ts";
import { MEASURES } from "./measures.ts";
import { indexRuns, keyOf } from "./row-facts.ts";
import type { VerdictRow } from "./verdict-types.ts";

const PARTS = MEASURES.filter((m) => m.part_of !== undefined);
const sourceOf = (m: MeasureDef): SplitSource => m.split_source ?? "server_timings";
/** The parts of a row's measure from one source, in the catalogue's order. */
const partsOf = (measure: string, source: SplitSource) =>
  PARTS.filter((p) => p.part_of!.includes(measure) && sourceOf(p) === source);
/** Per-request parts first: they sum to the row's figures; the means only explain it. */
const SOURCES: readonly SplitSource[] = ["server_timings", "metrics"];

const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;

/**
 * Each row of a measure with parts gets its `split` from the first source whose every part has a
 * value on both sides (`baseFor`: the base runs the row's own base figure came from).
 */
export function withSplits(
  rows: VerdictRow[],
  head: readonly RunFigures[],
  baseFor: (row: VerdictRow) => readonly RunFigures[],
): void {
  // each run's values by key, indexed once for this comparison: it reads every part of every row
  const index = new Map<RunFigures, Map<string, number>>();
  const partValue = (run: RunFigures, key: string): number | undefined => {
    let m = index.get(run);
    if (m === undefined) {
      m = indexRuns([run])[0]!;
      index.set(run, m);
    }
    return m.get(key);
  };
  for (const r of rows) {
    if (r.level === null) continue;
    for (const source of SOURCES) {
      const mine = partsOf(r.measure, source);
      if (mine.length === 0) continue;
      const base = baseFor(r);
      const split: NonNullable<VerdictRow["split"]> = [];
      for (const p of mine) {
        const key = keyOf(r.benchmark, p.name);
        const hv = head.map((x) => partValue(x, key)).filter((v): v is number => v !== undefined);
        const bv = base.map((x) => partValue(x, key)).filter((v): v is number => v !== undefined);
        if (hv.length === 0 || bv.length === 0) break;
        split.push({ part: p.name, base: mean(bv), head: mean(hv) });
      }
      if (split.length === mine.length) {
        r.split = split;
        r.split_source = source;
        break;
      }
    }
  }
}

/** A part's short name: `ttft_p95_queue_ms`, `server_mean_queue_ms` → `queue`. */
export const partName = (measure: string) => /_([a-z]+)_ms$/.exec(measure)?.[1] ?? measure;

/** "+4.0", "−1.2", and "±0.0" for what rounds to nothing (never "−0.0"). */
const signed = (x: number) => (Math.abs(x) < 0.05 ? "±0.0" : `${x > 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}`);

type Splittable = Pick<VerdictRow, "split" | "split_source" | "base" | "head">;

/** A row's change and each part's, or null without a split or a change in ms. */
function changes(r: Splittable): { total: number; parts: { name: string; d: number }[] } | null {
  if (!r.split || r.base === null || r.head === null) return null;
  return {
    total: r.head - r.base,
    parts: r.split.map((p) => ({ name: partName(p.part), d: p.head - p.base })),
  };
}

/**
 * The part a row's change is mostly in: of the same sign as the change, holding at least half of
 * it (parts that sum to the row's change are weighed against it; means, which need not, against
 * each other); null where none does.
 */
export function dominantPart(r: Splittable): string | null {
  const c = changes(r);
  if (c === null) return null;
  const along = c.parts.filter((p) => Math.sign(p.d) === Math.sign(c.total) && p.d !== 0);
  if (along.length === 0) return null;
  const top = along.reduce((a, p) => (Math.abs(p.d) > Math.abs(a.d) ? p : a));
  const whole =
    r.split_source === "metrics" ? along.reduce((a, p) => a + Math.abs(p.d), 0) : Math.abs(c.total);
  return Math.abs(top.d) >= 0.5 * whole ? top.name : null;
}

/**
 * A row's change in its parts: "TTFT p95 +34.0 ms: queue +29.1, prefill +4.0, client +0.9 (mostly
 * queue)", or from the server's means "E2E p95 +120.0 ms; the server's means: queue +2.0, prefill
 * +1.0, decode +110.0, rest +7.0 (mostly decode)"; the rest where the parts do not sum to the
 * row's change. Null without a split or a change in ms.
 */
export function splitText(r: Splittable, label: string): string | null {
  const c = changes(r);
  if (c === null) return null;
  const rest = c.total - c.parts.reduce((a, p) => a + p.d, 0);
  const top = dominantPart(r);
  const restText = Math.abs(rest) >= 0.05 ? `, rest ${signed(rest)}` : "";
  const lead = `${label} ${signed(c.total)} ms${r.split_source === "metrics" ? "; the server's means:" : ":"}`;
  return `${lead} ${c.parts.map((p) => `${p.name} ${signed(p.d)}`).join(", ")}${restText}${top ? ` (mostly ${top})` : ""}`;
}

/** Where the parts come from, in words (said once above the lines), for the sources the rows use. */
export function splitSource(rows: readonly VerdictRow[]): string {
  const used = new Set(splitRows(rows).map((r) => r.split_source ?? "server_timings"));
  return [
    used.has("server_timings")
      ? "ms, from the server's own prompt time per request: queue = before the server began the prompt, its queue and the transport; prefill = its prompt time; client = the client's lateness"
      : null,
    used.has("metrics")
      ? "the server's means: its own mean time per phase over the level's window from its /metrics histograms (queue = waiting for a slot, prefill = scheduled to first token, decode = first token to last), not this percentile's; rest = what they do not explain (client, transport, the percentile's own)"
      : null,
  ]
    .filter(Boolean)
    .join("; ");
}

/** Rows of a measure with parts that regressed or improved. */
const movedWithParts = (rows: readonly VerdictRow[]) =>
  rows.filter(
    (r) =>
      PARTS.some((p) => p.part_of!.includes(r.measure)) &&
      (r.verdict === "regressed" || r.verdict === "improved"),
  );

/** The moved rows that carry a split, the gated first: the rows `whyLines` says and the dashboard draws. */
export const splitRows = (rows: readonly VerdictRow[]): VerdictRow[] =>
  movedWithParts(rows)
    .filter((r) => r.split)
    .sort((a, b) => Number(b.gated) - Number(a.gated));

/** The most rows a reader is given reasons for (the rest are in the JSON). */
const MAX_WHY = 6;

/**
 * Why the measures with parts moved, one line per row that regressed or improved (the gated first),
 * or one line saying nothing could split them when the server gave no parts. Empty when none moved.
 */
export function whyLines(rows: readonly VerdictRow[], nameOf: (r: VerdictRow) => string): string[] {
  if (movedWithParts(rows).length === 0) return [];
  const split = splitRows(rows);
  if (split.length === 0)
    return [
      "cannot split: the server gave no prompt time of its own in its streams (llama.cpp's `timings`) and no phase histograms on /metrics (vLLM's queue, prefill and decode times) on both sides, so queue, prefill, decode and client cannot be told apart",
    ];
  const out = split.slice(0, MAX_WHY).map((r) => splitText(r, nameOf(r))!);
  if (split.length > MAX_WHY) out.push(`and ${split.length - MAX_WHY} more rows split in the JSON`);
  return out;
}
