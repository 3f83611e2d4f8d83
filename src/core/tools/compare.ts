/**
 * `tokenbench compare base.json head.json`: per level and measure, base, head, delta % and a
 * verdict, with the results service's statistics (src/shared). Where both documents carry
 * per-request samples, the verdict also accounts for within-run noise: a seeded bootstrap
 * interval on the percentile difference must exclude zero.
 */
import type { RequestRecord, ResultDocument } from "../../schema/v1.ts";
import { documentPoints, MEASURE_BY_NAME } from "../../shared/measures.ts";
import {
  parseRules,
  percentVerdict,
  type Rules,
  ruleFor,
  type Severity,
  severityOf,
} from "../../shared/rules.ts";
import {
  bootstrapQuantileDiff,
  DEFAULT_THRESHOLDS,
  judge,
  type Thresholds,
  type Verdict,
} from "../../shared/statistics.ts";
import { deriveRequest } from "../results/metrics.ts";

export interface DocCompareRow {
  benchmark: string;
  level: number | null;
  measure: string;
  unit: string;
  direction: "lower" | "higher";
  base: number | null;
  head: number;
  delta_pct: number | null;
  method: "bootstrap" | "percent_threshold" | "none";
  interval: [number, number] | null;
  verdict: Verdict;
  /** The rule that judged the row (shared/rules.ts), and what its regression means. */
  rule: string;
  severity: Severity;
}

/** Measures computed from per-request samples, and how to get the samples and quantile. */
const SAMPLED: Record<string, { q: number; of: (recs: RequestRecord[]) => number[] }> = {
  ttft_p50_ms: { q: 0.5, of: (rs) => rs.map((r) => deriveRequest(r).ttftMs).filter(isNum) },
  ttft_p95_ms: { q: 0.95, of: (rs) => rs.map((r) => deriveRequest(r).ttftMs).filter(isNum) },
  ttft_p99_ms: { q: 0.99, of: (rs) => rs.map((r) => deriveRequest(r).ttftMs).filter(isNum) },
  tpot_p50_ms: { q: 0.5, of: (rs) => rs.map((r) => deriveRequest(r).tpotMs).filter(isNum) },
  e2e_p50_ms: { q: 0.5, of: (rs) => rs.map((r) => deriveRequest(r).e2eMs).filter(isNum) },
  e2e_p95_ms: { q: 0.95, of: (rs) => rs.map((r) => deriveRequest(r).e2eMs).filter(isNum) },
  decode_tps: { q: 0.5, of: (rs) => rs.map((r) => deriveRequest(r).decodeTokS).filter(isNum) },
  itl_p50_ms: { q: 0.5, of: gaps },
  itl_p95_ms: { q: 0.95, of: gaps },
};

function isNum(x: number | null): x is number {
  return x !== null && Number.isFinite(x);
}
function gaps(rs: RequestRecord[]): number[] {
  const out: number[] = [];
  for (const r of rs)
    for (let i = 1; i < r.event_times_ms.length; i++)
      out.push(r.event_times_ms[i]! - r.event_times_ms[i - 1]!);
  return out;
}

function samplesByLevel(doc: ResultDocument): Map<number, RequestRecord[]> {
  const m = new Map<number, RequestRecord[]>();
  for (const r of doc.requests ?? []) {
    if (r.warmup || r.error !== null) continue;
    const list = m.get(r.level) ?? [];
    list.push(r);
    m.set(r.level, list);
  }
  return m;
}

export interface DocCompareOptions {
  thresholds?: Thresholds;
  /** `"ttft_p95_ms=+10%, *=t-test"`: t-test is the bootstrap here (percent without samples). */
  rules?: Rules;
  /** Bootstrap: a change must also exceed this effect size, in % of base. */
  minEffectPct?: number;
  iterations?: number;
  seed?: number;
}

export function compareDocuments(
  base: ResultDocument,
  head: ResultDocument,
  opts: DocCompareOptions = {},
): DocCompareRow[] {
  const th = opts.thresholds ?? DEFAULT_THRESHOLDS;
  const minEffect = opts.minEffectPct ?? 1;
  const basePts = new Map(documentPoints(base).map((p) => [`${p.benchmark}\u0000${p.measure}`, p]));
  const baseSamples = samplesByLevel(base);
  const headSamples = samplesByLevel(head);
  const rows: DocCompareRow[] = [];
  for (const h of documentPoints(head)) {
    const def = MEASURE_BY_NAME.get(h.measure);
    if (!def) continue;
    const b = basePts.get(`${h.benchmark}\u0000${h.measure}`) ?? null;
    const row: DocCompareRow = {
      benchmark: h.benchmark,
      level: h.level,
      measure: h.measure,
      unit: def.unit,
      direction: def.direction,
      base: b?.value ?? null,
      head: h.value,
      delta_pct: b && b.value !== 0 ? (100 * (h.value - b.value)) / Math.abs(b.value) : null,
      method: "none",
      interval: null,
      verdict: "no_baseline",
      rule: "",
      severity: "none",
    };
    const { rule, gating } = ruleFor(opts.rules ?? parseRules(null), h.measure);
    row.rule = rule.text;
    if (b !== null && rule.kind === "percent") {
      row.method = "percent_threshold";
      row.verdict = percentVerdict(row.delta_pct, rule.pct, def.direction);
    } else if (b !== null && rule.kind === "off") {
      row.verdict = "unchanged";
    } else if (b !== null) {
      const s = SAMPLED[h.measure];
      const bs = s && h.level !== null ? s.of(baseSamples.get(h.level) ?? []) : [];
      const hs = s && h.level !== null ? s.of(headSamples.get(h.level) ?? []) : [];
      if (s && bs.length >= 5 && hs.length >= 5) {
        row.method = "bootstrap";
        row.interval = bootstrapQuantileDiff(bs, hs, s.q, {
          iterations: opts.iterations ?? 1000,
          confidence: th.confidence,
          seed: opts.seed ?? 1,
        });
        const excludesZero = row.interval[0] > 0 || row.interval[1] < 0;
        const big = row.delta_pct !== null && Math.abs(row.delta_pct) > minEffect;
        if (excludesZero && big) {
          const up = h.value > b.value;
          row.verdict = up === (def.direction === "higher") ? "improved" : "regressed";
        } else row.verdict = "unchanged";
      } else {
        const j = judge([b.value], h.value, def.direction, th);
        row.method = "percent_threshold";
        row.verdict = j.verdict;
      }
    }
    row.severity = severityOf(row.verdict, gating);
    rows.push(row);
  }
  return rows;
}

const f = (v: number | null) => (v === null ? "–" : Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3));
const MARK: Record<Verdict, string> = {
  improved: "improved",
  regressed: "REGRESSED",
  unchanged: "unchanged",
  no_baseline: "no baseline",
};

export function compareMarkdown(rows: DocCompareRow[]): string {
  const lines = [
    "| benchmark | measure | base | head | Δ % | rule | method | verdict |",
    "|---|---|---:|---:|---:|---|---|---|",
  ];
  for (const r of rows) {
    const d = r.delta_pct === null ? "–" : `${r.delta_pct > 0 ? "+" : ""}${r.delta_pct.toFixed(1)}`;
    const m =
      r.method === "bootstrap" && r.interval
        ? `bootstrap Δ∈[${f(r.interval[0])}, ${f(r.interval[1])}]`
        : r.method;
    lines.push(
      `| ${r.benchmark} | ${r.measure} | ${f(r.base)} | ${f(r.head)} | ${d} | ${r.rule} | ${m} | ${MARK[r.verdict]}${r.severity === "warning" ? " (warning)" : ""} |`,
    );
  }
  const n = (v: Verdict) => rows.filter((r) => r.verdict === v).length;
  lines.push(
    "",
    `${n("regressed")} regressed, ${n("improved")} improved, ${n("unchanged")} unchanged, ${n("no_baseline")} without a baseline.`,
  );
  return lines.join("\n");
}
