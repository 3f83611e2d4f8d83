/**
 * The verdict engine's rows and gate in words: one headline, one name per measure, one word per
 * verdict, used by the terminal, the PR comment and the dashboard alike, so they say the same
 * thing. Pure; callers escape for their medium.
 */

import type { ResultDocument } from "../schema/v1.ts";
import { environmentText } from "./environment-diff.ts";
import { maxOf, minOf } from "./extremes.ts";
import { isShare } from "./measure-types.ts";
import { MEASURE_BY_NAME } from "./measures.ts";
import { dominantPart } from "./row-splits.ts";
import { DEFAULT_GATE_TEXT, type FailOn } from "./rules.ts";
import type { Method, Verdict, VerdictRow, VerdictSummary } from "./verdict-types.ts";

/** The one phrase for a row or a run without a baseline, on every surface. */
export const NO_BASELINE = "no baseline";

/** "TTFT p95 (ms)": the catalogue's label with its unit. */
export function measureName(measure: string): string {
  const def = MEASURE_BY_NAME.get(measure);
  if (!def) return measure;
  return def.unit && !def.label.includes(def.unit) && def.unit !== "ratio"
    ? `${def.label} (${def.unit})`
    : def.label;
}

/** "at c=16", "at 4 req/s", "in profile decode", or "" for a run-wide benchmark. */
export function wherePhrase(benchmark: string): string {
  const closed = /^closed (c=\d+)$/.exec(benchmark);
  if (closed) return `at ${closed[1]}`;
  const open = /^open (.+)$/.exec(benchmark);
  if (open) return `at ${open[1]}`;
  if (benchmark === "search saturation" || benchmark === "server startup") return "";
  const tier = /^agent capacity (.+)$/.exec(benchmark);
  if (tier) return `@ ${tier[1]}`;
  if (benchmark === "all levels") return "over all levels";
  if (/^at [\d.]+ tok\/s per user$/.test(benchmark)) return `on the frontier ${benchmark}`;
  const point = /^frontier point (.+)$/.exec(benchmark);
  if (point) return `on the frontier at ${point[1]}`;
  const span = /^frontier (.+)$/.exec(benchmark);
  if (span) return `along the frontier (${span[1]})`;
  return `in ${benchmark}`;
}

/** "TTFT p95 at c=16": the measure's label and where. */
export const rowLabel = (r: { measure: string; benchmark: string }) =>
  `${MEASURE_BY_NAME.get(r.measure)?.label ?? r.measure} ${wherePhrase(r.benchmark)}`.trim();

export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  return a >= 1000 ? v.toFixed(0) : a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

const signed = (x: number, digits: number) =>
  `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(x).toFixed(digits)}`;

/** "+18.0 %", or for a share "+25.0 pp". */
export function deltaText(d: number | null, pp: number | null = null): string {
  if (pp !== null) return `${signed(pp, 1)} pp`;
  return d === null ? "–" : `${signed(d, 1)} %`;
}

/** A row's change: points for a share, else per cent. */
export const rowDelta = (r: Pick<VerdictRow, "delta_pct" | "delta_pp">) => deltaText(r.delta_pct, r.delta_pp);

/** "[+11.0, +25.0]" (the change's interval, in % of the base or in points), or "" when the method has none. */
export function intervalText(i: [number, number] | null): string {
  return i === null ? "" : `[${signed(i[0], 1)}, ${signed(i[1], 1)}]`;
}

const rowInterval = (r: Pick<VerdictRow, "interval_pct" | "interval_pp">) => r.interval_pp ?? r.interval_pct;

export const METHOD_TEXT: Record<Method, string> = {
  "ab-paired": "A/B paired",
  "history-t": "history-t",
  "repeats-t": "repeats-t",
  bootstrap: "bootstrap",
  exact: "exact test",
  percent: "percent",
  off: "not judged",
  none: "–",
};

/** The method and what it counts as independent: "history-t, per job", "bootstrap, within one run". */
export function methodText(r: Pick<VerdictRow, "method" | "independent">): string {
  const unit =
    r.independent === "request"
      ? r.method === "bootstrap"
        ? "within one run"
        : "per request"
      : r.independent === "repeat"
        ? "within one job"
        : r.independent === "job"
          ? "per job"
          : r.independent === "block"
            ? "per block"
            : null;
  return unit ? `${METHOD_TEXT[r.method]}, ${unit}` : METHOD_TEXT[r.method];
}

/** "could detect ≥ 6.2 %" (a share: "≥ 1.0 pp"). */
export function detectableText(r: Pick<VerdictRow, "detectable" | "delta_pp" | "measure">): string | null {
  if (r.detectable === null) return null;
  const share = r.measure === "error_rate" || r.measure === "slo_pass_pct";
  return `could detect ≥ ${r.detectable.toFixed(1)} ${share ? "pp" : "%"}`;
}

/** The verdict in words: the meaning never rests on a colour or an emoji. */
export function verdictWord(
  r: Pick<
    VerdictRow,
    | "verdict"
    | "severity"
    | "noise_pct"
    | "interval_pct"
    | "reason"
    | "gated"
    | "detectable"
    | "delta_pp"
    | "measure"
  >,
): string {
  const detect = r.gated ? detectableText(r) : null;
  const withDetect = (w: string) => (detect ? `${w} (${detect})` : w);
  switch (r.verdict) {
    case "regressed":
      return r.reason
        ? `regressed: ${r.reason}`
        : r.severity === "warning"
          ? "regressed (warning)"
          : "regressed";
    case "improved":
      return "improved";
    case "unchanged":
      return withDetect("unchanged");
    case "too_noisy": {
      if (detect) return `too noisy to judge (${detect})`;
      if (r.noise_pct !== null) return `too noisy to judge (CV ${r.noise_pct.toFixed(1)} %)`;
      const i = r.interval_pct;
      return i ? `too noisy to judge (±${((i[1] - i[0]) / 2).toFixed(1)} %)` : "too noisy to judge";
    }
    case "not_judged":
      return `not judged: ${r.reason ?? "?"}`;
    case "no_baseline":
      return NO_BASELINE;
  }
  return r.verdict;
}

/** Decoration for surfaces that like it (the PR comment); always beside the word. */
export const VERDICT_EMOJI: Record<Verdict, string> = {
  regressed: "🔴",
  improved: "🟢",
  unchanged: "⚪",
  too_noisy: "🟡",
  not_judged: "⚠️",
  no_baseline: "➖",
};

/**
 * A row's figures as every table shows them (terminal, comment, dashboard): benchmark, measure,
 * base, head, Δ, and the interval when the table has that column. Callers escape for their medium.
 */
export function rowCells(r: VerdictRow, withInterval: boolean): string[] {
  return [
    r.benchmark,
    measureName(r.measure),
    formatValue(r.base),
    formatValue(r.head),
    rowDelta(r),
    ...(withInterval ? [intervalText(rowInterval(r)) || "–"] : []),
  ];
}

/** "TTFT p95 (ms) at c=16 +18.0 % [+11.0, +25.0]" */
export function rowPhrase(r: VerdictRow): string {
  const where = wherePhrase(r.benchmark);
  const i = intervalText(rowInterval(r));
  const what = `${measureName(r.measure)}${where ? ` ${where}` : ""}`;
  if (r.head === null) return `${what}: ${r.reason ?? "no value"}`;
  return `${what} ${rowDelta(r)}${i ? ` ${i}` : ""}`;
}

/** A row's phrase with the part its change is mostly in, where its split names one: "… (mostly queue)". */
function causePhrase(r: VerdictRow): string {
  const part = dominantPart(r);
  return part ? `${rowPhrase(r)} (mostly ${part})` : rowPhrase(r);
}

/** The gate's rows in a fixed order: the gate's measures as declared, then by level. */
export function gatedInOrder(rows: readonly VerdictRow[], gateText: string): VerdictRow[] {
  const order = gateText.split(",").map((x) => x.trim().split("@")[0]!);
  const rank = (m: string) => (order.indexOf(m) < 0 ? order.length : order.indexOf(m));
  return rows
    .filter((r) => r.gated)
    .sort((a, b) => rank(a.measure) - rank(b.measure) || (a.level ?? 0) - (b.level ?? 0));
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const list = (xs: readonly string[], named = 3) =>
  xs.length <= named ? xs.join(", ") : `${xs.slice(0, named).join(", ")} and ${xs.length - named} more`;

/**
 * Each measure once, by its first row in the gate's order (all levels before any one level): a
 * change names its measures, and the same change names the same ones whichever single-level rows
 * of them noise tipped over their interval this time (the details have every row).
 */
const firstPerMeasure = (rows: readonly VerdictRow[]) =>
  rows.filter((r, i) => rows.findIndex((x) => x.measure === r.measure) === i);

/**
 * The one headline, led by the gate: its decision, then the measures that decided it in the
 * gate's order (each by its first row), then how many other rows the details hold (counts that do
 * not wobble with noise).
 */
export function headline(s: VerdictSummary, named = 3): string {
  const rows = s.rows;
  if (rows.length > 0 && s.counts.no_baseline === rows.length)
    return `No baseline: ${s.baseline_note ?? `none of the ${rows.length} measures has one`}.`;
  const gated = gatedInOrder(rows, s.gate.text || DEFAULT_GATE_TEXT);
  const others = rows.length - gated.length;
  const tail = others > 0 ? `; ${plural(others, "other row")} in the details.` : ".";
  // The rows that failed the gate (a gated row can read "regressed" by its own interval on evidence
  // that cannot gate it: that is not why the gate failed).
  const failedKeys = new Set(s.gate.failed);
  const regressed = firstPerMeasure(
    gated.filter((r) => r.verdict === "regressed" && failedKeys.has(`${r.benchmark}\u0000${r.measure}`)),
  ).map(causePhrase);
  switch (s.gate.status) {
    case "failed":
      return `Gate failed: ${list(regressed, named)} regressed${tail}`;
    case "passed": {
      // percent for the ratio rows, points for the share rows: one range per unit
      const span = (share: boolean, unit: string) => {
        const d = gated
          .filter((r) => isShare({ name: r.measure }) === share)
          .map((r) => r.detectable)
          .filter((x): x is number => x !== null && r0(x));
        if (d.length === 0) return null;
        const [lo, hi] = [minOf(d).toFixed(1), maxOf(d).toFixed(1)];
        return `${lo === hi ? lo : `${lo}–${hi}`} ${unit}`;
      };
      const spans = [span(false, "%"), span(true, "pp")].filter((x) => x !== null);
      const range = spans.length ? `; each could detect ≥ ${spans.join(", ")}` : "";
      return `Gate passed: no gated row regressed (${plural(gated.length, "row")}${range})${tail}`;
    }
    case "cannot_judge":
      return `Gate cannot judge: ${s.gate.reason}${tail}`;
    case "not_gated": {
      const moved = firstPerMeasure(
        gated.filter((r) => r.verdict === "regressed" || r.verdict === "improved"),
      );
      const words = moved.map((r) => `${causePhrase(r)} ${r.verdict}`);
      return `Not gated (${s.gate.reason})${words.length ? `: ${list(words, named)}` : ": no gated row moved beyond its interval"}${tail}`;
    }
    case "no_baseline":
      return `No baseline for the gated rows${tail}`;
    case "off": {
      const reg = rows.filter((r) => r.verdict === "regressed").map(rowPhrase);
      return `${reg.length > 0 ? `${plural(reg.length, "row")} regressed: ${list(reg, named)}` : "No regression"} (gate off)${tail}`;
    }
  }
}
const r0 = (x: number) => Number.isFinite(x);

/**
 * Why a check fails under `failOn`, in one line: the headline, and where the gate is not what
 * fails it (`warning`: a row outside the gate regressed, or a gated row by its own interval on
 * evidence that cannot gate), the rows that do, so a failed step never reads "nothing moved".
 */
export function failureLine(s: VerdictSummary, failOn: FailOn, named = 3): string {
  const gate = s.gate.status === "failed" ? "" : `; gate ${s.gate.status.replace("_", " ")}`;
  const byGate = s.gate.status === "failed" || (s.gate.status === "cannot_judge" && failOn !== "regression");
  // all-levels rows first: one row per measure, the one that averages its levels' noise
  const warned = s.rows
    .filter((r) => r.severity === "warning")
    .sort((a, b) => Number(a.level !== null) - Number(b.level !== null));
  const measures = firstPerMeasure(warned);
  const why =
    byGate || warned.length === 0
      ? ""
      : ` It fails on warnings: ${plural(warned.length, "row")} of ${plural(measures.length, "measure")} regressed: ${list(measures.map(rowPhrase), named)}.`;
  return `${headline(s, named)}${why} (fail-on: ${failOn}${gate})`;
}

/** The informational rows in one sentence: "Of 40 other rows: 3 regressed, 1 improved (chance alone flags about 1)." */
export function othersLine(s: VerdictSummary): string | null {
  const others = s.rows.filter((r) => !r.gated);
  if (others.length === 0) return null;
  const c = (v: Verdict) => others.filter((r) => r.verdict === v).length;
  const parts = [
    c("regressed") ? `${c("regressed")} regressed` : null,
    c("improved") ? `${c("improved")} improved` : null,
    c("too_noisy") ? `${c("too_noisy")} too noisy to judge` : null,
    c("not_judged") ? `${c("not_judged")} not judged` : null,
    c("unchanged") ? `${c("unchanged")} unchanged` : null,
    c("no_baseline") ? `${c("no_baseline")} without a baseline` : null,
  ].filter(Boolean);
  const chance =
    s.chance_flags.rows > 0
      ? ` (chance alone would flag about ${s.chance_flags.expected.toFixed(1)} of them as regressed)`
      : "";
  return `Of ${plural(others.length, "other row")}: ${parts.join(", ")}${chance}.`;
}

/** What the verdicts rest on: "against 10 runs of main (2 left out); head: one run; methods: ...". */
export function evidenceLine(s: VerdictSummary, baseName: string): string {
  const base =
    s.base_kind === "ab"
      ? `the base's server in the same job (A/B, ${plural(s.base_runs, "pair")})`
      : s.base_kind === "history"
        ? `${plural(s.base_runs, "run")} of ${baseName}${s.excluded.length ? ` (${s.excluded.length} left out: ${[...new Set(s.excluded.map((e) => e.reason.split(":")[0]!))].join(", ")})` : ""}`
        : s.base_kind === "repeats"
          ? `${baseName} (${s.base_runs} repeats)`
          : baseName;
  const methods = new Map<string, number>();
  for (const r of s.rows)
    if (r.method !== "none") methods.set(methodText(r), (methods.get(methodText(r)) ?? 0) + 1);
  const m = [...methods].map(([k, n]) => `${k} ${n}`).join(", ");
  const head =
    s.base_kind === "ab" ? "" : `; head: ${s.head_runs > 1 ? `${s.head_runs} repeats` : "one run"}`;
  return `against ${base}${head}${m ? `; methods: ${m}` : ""}`;
}

/**
 * "Answers differ: 5 of 8 fixed prompts answered otherwise than the base (the first, prompt 0, from
 * character 12: "blue" where the base said "red")." or "Answers unchanged: …", or null without the check.
 */
export function consistencyLine(s: Pick<VerdictSummary, "consistency">): string | null {
  const c = s.consistency;
  if (c === null || c.compared === 0) return null;
  if (c.differ === 0)
    return `Answers unchanged: the ${plural(c.compared, "fixed prompt")} at temperature 0 answered as in the base.`;
  const f = c.first!;
  const where =
    f.at_char === null
      ? `prompt ${f.prompt}, past the characters kept`
      : `prompt ${f.prompt}, from character ${f.at_char}: ${JSON.stringify(f.head)} where the base said ${JSON.stringify(f.base)}`;
  return `Answers differ: ${c.differ} of ${plural(c.compared, "fixed prompt")} at temperature 0 answered otherwise than the base (the first, ${where}); a speed change here may come with another output.`;
}

/**
 * A run's levels that are not valid, one line each ("c=4: client-bound: …"), reasons of single rows
 * (too few samples for a percentile) left out: what the comment, the CLI and the run page list
 * under "Not valid".
 */
export function invalidLevelLines(doc: ResultDocument): string[] {
  if (doc.kind !== "sweep") return [];
  return doc.levels.flatMap((l) =>
    (l.validity?.reasons ?? [])
      .filter((x) => x.code !== "too_few_samples")
      .map((x) => `${l.mode === "closed" ? `c=${l.level}` : `${l.level} req/s`}: ${x.text}`),
  );
}

/** "Not valid (rows at these levels are not judged): c=4: …; and 2 more." or null when every level is valid. */
export function invalidLine(doc: ResultDocument, named = 4): string | null {
  const lines = invalidLevelLines(doc);
  if (lines.length === 0) return null;
  return `Not valid (rows at these levels are not judged): ${lines.slice(0, named).join("; ")}${lines.length > named ? `; and ${lines.length - named} more` : ""}.`;
}

/** "Another environment: driver 550.54 → 555.42." or null when nothing differs. */
export function environmentLine(s: Pick<VerdictSummary, "environment">): string | null {
  return s.environment.length > 0 ? `Another environment: ${environmentText(s.environment)}.` : null;
}

/** The gate in one line for a footer: what it holds and how. */
export function gateLine(s: VerdictSummary): string {
  const g = s.gate;
  if (g.status === "off") return "The gate is off (gate: off).";
  const corr = g.correlation !== null ? `, rows moving together at ρ ≈ ${g.correlation.toFixed(2)}` : "";
  return `Gate: ${g.text || DEFAULT_GATE_TEXT} at every level; false-fail rate per pull request held at ${g.fwer_pct} % (${g.procedure}${corr}).`;
}
