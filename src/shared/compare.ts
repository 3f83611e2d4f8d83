/**
 * Head vs baseline, per benchmark and measure: the rows behind the results service's compare
 * endpoint, the PR comment and `tokenbench compare`. Pure.
 */
import { MEASURE_BY_NAME } from "./measures.ts";
import { parseRules, percentVerdict, type Rules, ruleFor, type Severity, severityOf } from "./rules.ts";
import { type Comparison, DEFAULT_THRESHOLDS, judge, type Thresholds, type Verdict } from "./statistics.ts";

export interface CompareRow extends Comparison {
  benchmark: string;
  measure: string;
  unit: string;
  direction: "lower" | "higher";
  level: number | null;
  /** The rule that judged this row (`+10%`, `t-test`, `off`), and whether it was the measure's own. */
  rule: string;
  /** regression: a measure with its own rule regressed; warning: one judged by `*` did. */
  severity: Severity;
}

export interface CompareSummary {
  rows: CompareRow[];
  counts: Record<Verdict, number>;
  thresholds: Thresholds;
  rules: string;
}

export function compareRows(
  head: readonly { benchmark: string; measure: string; value: number; level?: number | null }[],
  baseline: readonly { benchmark: string; measure: string; value: number }[],
  thresholds: Thresholds = DEFAULT_THRESHOLDS,
  rules: Rules = parseRules(null),
): CompareSummary {
  const base = new Map<string, number[]>();
  for (const b of baseline) {
    const k = `${b.benchmark}\u0000${b.measure}`;
    const list = base.get(k) ?? [];
    list.push(b.value);
    base.set(k, list);
  }
  const rows: CompareRow[] = [];
  for (const h of head) {
    const def = MEASURE_BY_NAME.get(h.measure);
    if (!def) continue;
    const c = judge(base.get(`${h.benchmark}\u0000${h.measure}`) ?? [], h.value, def.direction, thresholds);
    const { rule, gating } = ruleFor(rules, h.measure);
    let judged: Comparison = c;
    if (rule.kind === "percent" && c.verdict !== "no_baseline")
      judged = {
        ...c,
        interval: null,
        method: "percent_threshold",
        verdict: percentVerdict(c.delta_pct, rule.pct, def.direction),
      };
    else if (rule.kind === "off" && c.verdict !== "no_baseline") judged = { ...c, verdict: "unchanged" };
    rows.push({
      ...judged,
      benchmark: h.benchmark,
      measure: h.measure,
      unit: def.unit,
      direction: def.direction,
      level: h.level ?? null,
      rule: rule.text,
      severity: severityOf(judged.verdict, gating),
    });
  }
  const counts: Record<Verdict, number> = { improved: 0, regressed: 0, unchanged: 0, no_baseline: 0 };
  for (const r of rows) counts[r.verdict]++;
  return { rows, counts, thresholds, rules: rules.text };
}
