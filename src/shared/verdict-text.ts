/**
 * The verdict engine's rows in words: one headline, one name per measure, one word per verdict,
 * used by the terminal, the PR comment and the dashboard alike, so they say the same thing.
 * Pure; callers escape for their medium.
 */
import { MEASURE_BY_NAME } from "./measures.ts";
import type { Method, Verdict, VerdictRow, VerdictSummary } from "./verdict.ts";

/** "TTFT p95 (ms)": the catalogue's label with its unit. */
export function measureName(measure: string): string {
  const def = MEASURE_BY_NAME.get(measure);
  if (!def) return measure;
  return def.unit && !def.label.includes(def.unit) ? `${def.label} (${def.unit})` : def.label;
}

/** "at c=16", "at 4 req/s", "in profile decode", or "" for a run-wide benchmark. */
export function wherePhrase(benchmark: string): string {
  const closed = /^closed (c=\d+)$/.exec(benchmark);
  if (closed) return `at ${closed[1]}`;
  const open = /^open (.+)$/.exec(benchmark);
  if (open) return `at ${open[1]}`;
  if (benchmark === "search saturation") return "";
  return `in ${benchmark}`;
}

export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  return a >= 1000 ? v.toFixed(0) : a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

const signed = (x: number, digits: number) =>
  `${x > 0 ? "+" : x < 0 ? "−" : "±"}${Math.abs(x).toFixed(digits)}`;

/** "+18 %" */
export function deltaText(d: number | null): string {
  return d === null ? "–" : `${signed(d, 1)} %`;
}

/** "[+11, +25]" (the change's interval in % of the base), or "" when the method has none. */
export function intervalText(i: [number, number] | null): string {
  return i === null ? "" : `[${signed(i[0], 1)}, ${signed(i[1], 1)}]`;
}

export const METHOD_TEXT: Record<Method, string> = {
  "repeats-t": "repeats-t",
  "history-t": "history-t",
  bootstrap: "bootstrap",
  percent: "percent",
  off: "not judged",
  none: "–",
};

/** The verdict in words: the meaning never rests on a colour or an emoji. */
export function verdictWord(
  r: Pick<VerdictRow, "verdict" | "severity" | "noise_pct" | "interval_pct">,
): string {
  switch (r.verdict) {
    case "regressed":
      return r.severity === "warning" ? "regressed (warning)" : "regressed";
    case "improved":
      return "improved";
    case "unchanged":
      return "unchanged";
    case "too_noisy": {
      if (r.noise_pct !== null) return `too noisy to judge (CV ${r.noise_pct.toFixed(1)} %)`;
      const i = r.interval_pct;
      return i ? `too noisy to judge (±${((i[1] - i[0]) / 2).toFixed(1)} %)` : "too noisy to judge";
    }
    case "no_baseline":
      return "no baseline";
  }
}

/** Decoration for surfaces that like it (the PR comment); always beside the word. */
export const VERDICT_EMOJI: Record<Verdict, string> = {
  regressed: "🔴",
  improved: "🟢",
  unchanged: "⚪",
  too_noisy: "🟡",
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
    deltaText(r.delta_pct),
    ...(withInterval ? [intervalText(r.interval_pct) || "–"] : []),
  ];
}

/** "TTFT p95 (ms) at c=16 +18 % [+11, +25]" */
export function rowPhrase(r: VerdictRow): string {
  const where = wherePhrase(r.benchmark);
  const i = intervalText(r.interval_pct);
  return `${measureName(r.measure)}${where ? ` ${where}` : ""} ${deltaText(r.delta_pct)}${i ? ` ${i}` : ""}`;
}

/** Worst first: regressions by the size of the change, gating ones before warnings. */
export function worstFirst(rows: readonly VerdictRow[]): VerdictRow[] {
  return [...rows].sort(
    (a, b) =>
      Number(b.severity === "regression") - Number(a.severity === "regression") ||
      Math.abs(b.delta_pct ?? 0) - Math.abs(a.delta_pct ?? 0),
  );
}

function countOf(rows: readonly VerdictRow[]): Record<Verdict, number> {
  const c: Record<Verdict, number> = {
    regressed: 0,
    improved: 0,
    too_noisy: 0,
    unchanged: 0,
    no_baseline: 0,
  };
  for (const r of rows) c[r.verdict]++;
  return c;
}

/**
 * The one headline, e.g. "3 regressed beyond noise: TTFT p95 (ms) at c=16 +18 % [+11, +25], …;
 * 2 improved; 40 unchanged; 1 too noisy to judge". Its counts are those of `rows`.
 */
export function headline(rows: readonly VerdictRow[], named = 3): string {
  const c = countOf(rows);
  if (rows.length > 0 && c.no_baseline === rows.length)
    return `No baseline: none of the ${rows.length} measures has one.`;
  const regressed = worstFirst(rows.filter((r) => r.verdict === "regressed"));
  // "beyond noise" where an interval said so, "beyond their threshold" where a percentage did.
  const stat = regressed.filter((r) => r.method !== "percent").length;
  const why = stat === regressed.length ? " beyond noise" : stat === 0 ? " beyond their threshold" : "";
  const parts: string[] = [];
  if (regressed.length > 0) {
    const shown = regressed.slice(0, named).map(rowPhrase);
    const more = regressed.length - shown.length;
    parts.push(
      `${regressed.length} regressed${why}: ${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`,
    );
  } else parts.push("No regression");
  if (c.improved) parts.push(`${c.improved} improved`);
  if (c.unchanged) parts.push(`${c.unchanged} unchanged`);
  if (c.too_noisy) parts.push(`${c.too_noisy} too noisy to judge`);
  if (c.no_baseline) parts.push(`${c.no_baseline} without a baseline`);
  return `${parts.join("; ")}.`;
}

/** What the verdicts rest on: "against 10 runs of main; head: 5 repeats; methods: repeats-t 40, percent 5". */
export function evidenceLine(s: VerdictSummary, baseName: string): string {
  const base =
    s.base_kind === "history"
      ? `${s.base_runs} run${s.base_runs === 1 ? "" : "s"} of ${baseName}`
      : s.base_kind === "repeats"
        ? `${baseName} (${s.base_runs} repeats)`
        : baseName;
  const methods = new Map<string, number>();
  for (const r of s.rows) if (r.method !== "none") methods.set(r.method, (methods.get(r.method) ?? 0) + 1);
  const m = [...methods].map(([k, n]) => `${METHOD_TEXT[k as Method]} ${n}`).join(", ");
  return `against ${base}; head: ${s.head_runs > 1 ? `${s.head_runs} repeats` : "one run"}${m ? `; methods: ${m}` : ""}`;
}
