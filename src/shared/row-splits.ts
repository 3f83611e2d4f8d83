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

/** Each run's values by key, indexed once: a comparison reads every part of every row of it. */
const INDEX = new WeakMap<RunFigures, Map<string, number>>();
function partValue(run: RunFigures, key: string): number | undefined {
  let m = INDEX.get(run);
  if (m === undefined) {
    m = indexRuns([run])[0]!;
    INDEX.set(run, m);
  }
  return m.get(key);
}

/**
 * Each row of a measure with parts gets its `split` from the first source whose every part has a
 * value on both sides (`baseFor`: the base runs the row's own base figure came from).
 */
export function withSplits(
  rows: VerdictRow[],
  head: readonly RunFigures[],
  baseFor: (row: VerdictRow) => readonly RunFigures[],
): void {
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

/**
 * A row's change in its parts: "TTFT p95 +34.0 ms: queue +29.1, prefill +4.0, client +0.9 (mostly
 * queue)", or from the server's means "E2E p95 +120.0 ms; the server's means: queue +2.0, prefill
 * +1.0, decode +110.0, rest +7.0 (mostly decode)"; the rest where the parts do not sum to the
 * row's change. Null without a split or a change in ms.
 */
export function splitText(
  r: Pick<VerdictRow, "split" | "split_source" | "base" | "head">,
  label: string,
): string | null {
  if (!r.split || r.base === null || r.head === null) return null;
  const total = r.head - r.base;
  const parts = r.split.map((p) => ({ name: partName(p.part), d: p.head - p.base }));
  const rest = total - parts.reduce((a, p) => a + p.d, 0);
  const along = parts.filter((p) => Math.sign(p.d) === Math.sign(total) && p.d !== 0);
  const top = along.length > 0 ? along.reduce((a, p) => (Math.abs(p.d) > Math.abs(a.d) ? p : a)) : null;
  // Parts that sum to the row's change are weighed against it; means (which need not) against each other.
  const whole = r.split_source === "metrics" ? along.reduce((a, p) => a + Math.abs(p.d), 0) : Math.abs(total);
  const mostly = top !== null && Math.abs(top.d) >= 0.5 * whole ? ` (mostly ${top.name})` : "";
  const restText = Math.abs(rest) >= 0.05 ? `, rest ${signed(rest)}` : "";
  const lead =
    r.split_source === "metrics"
      ? `${label} ${signed(total)} ms; the server's means:`
      : `${label} ${signed(total)} ms:`;
  return `${lead} ${parts.map((p) => `${p.name} ${signed(p.d)}`).join(", ")}${restText}${mostly}`;
}

/** The part a row's change is mostly in, or null where none holds half of it. */
export function dominantPart(r: Pick<VerdictRow, "split" | "split_source" | "base" | "head">): string | null {
  return /\(mostly ([a-z]+)\)$/.exec(splitText(r, "") ?? "")?.[1] ?? null;
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
