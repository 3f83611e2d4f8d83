/**
 * The one verdict engine. `tokenbench compare`, the Action's comment (file, artifact or service
 * baseline), the dashboard's run and PR pages and the service's compare endpoint all call
 * `judgeRuns` and only format its rows, so one pair of runs gets one verdict everywhere.
 *
 * The method is chosen by the evidence and named on every row (CONCEPTS.md "Comparing runs"):
 *   repeats-t  the head ran `--repeats N` (N >= 2): a Student-t interval on the change from the
 *              repeats' spread (Welch's, with the base's own spread when it has 2+ runs);
 *   history-t  one head run against a base history of >= 5 runs: the Student-t prediction
 *              interval for one new run;
 *   bootstrap  one run each side, both with per-request samples: a seeded bootstrap interval on
 *              the percentile's change (within-run noise only);
 *   percent    nothing to measure noise with, or a measure's own `+N%` rule: |change| > N %.
 * A statistical row changed when its interval excludes 0 and the change exceeds `minEffectPct`;
 * an unchanged row whose interval is wider than `noiseLimitPct` (or whose runs' noise is above
 * its percentage) is "too noisy to judge": it could not have seen the change it is there for.
 */
import type { ResultDocument } from "../schema/v1.ts";
import { type Direction, MEASURE_BY_NAME, type Point } from "./measures.ts";
import { medianOf, runPointsOf } from "./repeats.ts";
import { parseRules, type Rules, ruleFor, type Severity, severityOf } from "./rules.ts";
import { levelSamples, sampledQuantile } from "./samples.ts";
import {
  bootstrapQuantileDiff,
  mean,
  predictionInterval,
  stddev,
  tQuantile,
  type Verdict,
} from "./statistics.ts";

export type Method = "repeats-t" | "history-t" | "bootstrap" | "percent" | "off" | "none";
export type { Verdict };
export const VERDICTS: readonly Verdict[] = [
  "regressed",
  "improved",
  "too_noisy",
  "unchanged",
  "no_baseline",
];

/** What one side of a comparison knows: one list of points per run, and the document when it is one. */
export interface Evidence {
  /** A base history (one list per stored run), a document's repeats, or one document's points. */
  runs: Point[][];
  /** One run's per-request samples of a measure at a level (the bootstrap's input), or null. */
  samples: SampleSource | null;
  /** "history" (runs of a branch), "repeats" (one document run N times) or "run" (one document). */
  kind: "history" | "repeats" | "run";
}

export type SampleSource = (level: number, measure: string) => number[] | null;

export function documentEvidence(doc: ResultDocument): Evidence {
  const runs = runPointsOf(doc);
  const samples: SampleSource = (level, measure) => levelSamples(doc, level, measure)?.values ?? null;
  return { runs, samples: runs.length > 1 ? null : samples, kind: runs.length > 1 ? "repeats" : "run" };
}

/** Stored points of several runs (the service's base history), grouped by run. */
export function historyEvidence(points: readonly (Point & { run_id: string })[]): Evidence {
  const byRun = new Map<string, Point[]>();
  for (const p of points) {
    const list = byRun.get(p.run_id) ?? [];
    list.push(p);
    byRun.set(p.run_id, list);
  }
  return { runs: [...byRun.values()], samples: null, kind: "history" };
}

export interface VerdictOptions {
  rules?: Rules;
  /** Two-sided confidence of every interval (0.95). */
  confidence?: number;
  /** Base runs needed for history-t (5). */
  minHistory?: number;
  /** The percentage rule where nothing measures noise (5). */
  fallbackPct?: number;
  /** An interval wider than this, in % of the base, cannot see a change worth gating (10). */
  noiseLimitPct?: number;
  /** A statistical change must also exceed this, in % of the base (1). */
  minEffectPct?: number;
  /** Bootstrap resamples (1,000) and seed (1). */
  iterations?: number;
  seed?: number;
}

export const VERDICT_DEFAULTS = {
  confidence: 0.95,
  minHistory: 5,
  fallbackPct: 5,
  noiseLimitPct: 10,
  minEffectPct: 1,
  iterations: 1000,
  seed: 1,
} as const;

export interface VerdictRow {
  benchmark: string;
  level: number | null;
  measure: string;
  unit: string;
  direction: Direction;
  /** The base figure: the mean of a history, the median of a document's repeats, or its value. */
  base: number | null;
  base_n: number;
  /** The head figure: the median of its repeats, or its value. */
  head: number;
  head_n: number;
  delta_pct: number | null;
  /** The interval on the change, in % of the base, that the method used; null for percent. */
  interval_pct: [number, number] | null;
  /** The runs' coefficient of variation (%), where 2+ runs give one. */
  noise_pct: number | null;
  method: Method;
  verdict: Verdict;
  /** The rule that judged the row (`+10%`, `t-test`, `off`). */
  rule: string;
  severity: Severity;
}

export interface VerdictSummary {
  rows: VerdictRow[];
  counts: Record<Verdict, number>;
  rules: string;
  base_runs: number;
  head_runs: number;
  base_kind: Evidence["kind"];
}

const keyOf = (p: Pick<Point, "benchmark" | "measure">) => `${p.benchmark}\u0000${p.measure}`;

function valuesByKey(e: Evidence): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const run of e.runs)
    for (const p of run) {
      const list = m.get(keyOf(p)) ?? [];
      list.push(p.value);
      m.set(keyOf(p), list);
    }
  return m;
}

const pctOf = (x: number, base: number) => (100 * x) / Math.abs(base);
const cv = (xs: readonly number[]) => (xs.length >= 2 && mean(xs) !== 0 ? pctOf(stddev(xs), mean(xs)) : null);

/** Welch–Satterthwaite degrees of freedom for two sample variances over their counts. */
function welchDf(va: number, na: number, vb: number, nb: number): number {
  const a = va / na;
  const b = vb / nb;
  const den = (a * a) / (na - 1) + (b * b) / (nb - 1);
  return den > 0 ? ((a + b) * (a + b)) / den : na + nb - 2;
}

interface Judged {
  method: Method;
  interval: [number, number] | null;
  verdict: Verdict;
  noise: number | null;
}

function judgeOne(
  base: number[],
  head: number[],
  baseFig: number,
  headFig: number,
  samples: () => { q: number; b: number[]; h: number[] } | null,
  rule: ReturnType<typeof ruleFor>["rule"],
  direction: Direction,
  o: Required<Omit<VerdictOptions, "rules">>,
): Judged {
  const k = base.length;
  const m = head.length;
  const d = headFig - baseFig;
  const deltaPct = baseFig !== 0 ? pctOf(d, baseFig) : null;
  const noise = m >= 2 ? cv(head) : cv(base);
  const word = (sign: number): Verdict => (sign > 0 === (direction === "higher") ? "improved" : "regressed");
  if (rule.kind === "off") return { method: "off", interval: null, verdict: "unchanged", noise };
  const percent = (pct: number, calibrated: boolean): Judged => {
    // The default rule with 2-4 runs of noise: a change must also clear two standard deviations.
    const bar = calibrated && noise !== null ? Math.max(pct, 2 * noise) : pct;
    if (deltaPct !== null && Math.abs(deltaPct) > bar)
      return { method: "percent", interval: null, verdict: word(deltaPct), noise };
    const noisy = noise !== null && 2 * noise > pct;
    return { method: "percent", interval: null, verdict: noisy ? "too_noisy" : "unchanged", noise };
  };
  if (rule.kind === "percent") return percent(rule.pct, false);
  const alpha = (1 - o.confidence) / 2;
  let method: Method | null = null;
  let half = 0;
  let interval: [number, number] | null = null;
  if (m >= 2) {
    method = "repeats-t";
    const vh = stddev(head) ** 2;
    if (k >= 2) {
      const vb = stddev(base) ** 2;
      half = tQuantile(1 - alpha, welchDf(vh, m, vb, k)) * Math.sqrt(vh / m + vb / k);
    } else {
      // One base run: its noise is taken to be the head's (same testbed), so Var(diff) = s²(1 + 1/m).
      half = tQuantile(1 - alpha, m - 1) * Math.sqrt(vh * (1 + 1 / m));
    }
  } else if (k >= o.minHistory) {
    method = "history-t";
    // The band the dashboard draws and `judge` uses (a flat history keeps the percentage).
    const [lo, hi] = predictionInterval(base, {
      pct: o.fallbackPct,
      confidence: o.confidence,
      minPoints: o.minHistory,
    });
    half = (hi - lo) / 2;
  } else if (k === 1) {
    const s = samples();
    if (s && s.b.length >= 5 && s.h.length >= 5) {
      method = "bootstrap";
      interval = bootstrapQuantileDiff(s.b, s.h, s.q, {
        iterations: o.iterations,
        confidence: o.confidence,
        seed: o.seed,
      });
    }
  }
  if (method === null || baseFig === 0) return percent(o.fallbackPct, true);
  // repeats-t is a t interval on the means; the figures shown are medians (the table's).
  const centre = method === "repeats-t" ? mean(head) - (k >= 2 ? mean(base) : baseFig) : d;
  interval ??= [centre - half, centre + half];
  const ipct: [number, number] = [pctOf(interval[0], baseFig), pctOf(interval[1], baseFig)];
  const excludesZero = ipct[0] > 0 || ipct[1] < 0;
  if (excludesZero && deltaPct !== null && Math.abs(deltaPct) > o.minEffectPct)
    return { method, interval: ipct, verdict: word(deltaPct), noise };
  const wide = (ipct[1] - ipct[0]) / 2 > o.noiseLimitPct;
  return { method, interval: ipct, verdict: wide ? "too_noisy" : "unchanged", noise };
}

/**
 * Head evidence against base evidence under the rules: one row per head point (benchmark and
 * measure), with the figures, the interval, the method and the verdict. Pure and deterministic.
 */
export function judgeRuns(base: Evidence, head: Evidence, opts: VerdictOptions = {}): VerdictSummary {
  const o = { ...VERDICT_DEFAULTS, ...opts, rules: undefined } as Required<Omit<VerdictOptions, "rules">>;
  const rules = opts.rules ?? parseRules(null);
  const baseVals = valuesByKey(base);
  const headVals = valuesByKey(head);
  const order: Point[] = [];
  const seen = new Set<string>();
  for (const run of head.runs)
    for (const p of run)
      if (!seen.has(keyOf(p))) {
        seen.add(keyOf(p));
        order.push(p);
      }
  const rows: VerdictRow[] = [];
  for (const p of order) {
    const def = MEASURE_BY_NAME.get(p.measure);
    if (!def) continue;
    const h = headVals.get(keyOf(p))!;
    const b = baseVals.get(keyOf(p)) ?? [];
    const headFig = medianOf(h);
    const { rule, gating } = ruleFor(rules, p.measure);
    const row: VerdictRow = {
      benchmark: p.benchmark,
      level: p.level,
      measure: p.measure,
      unit: def.unit,
      direction: def.direction,
      base: null,
      base_n: b.length,
      head: headFig,
      head_n: h.length,
      delta_pct: null,
      interval_pct: null,
      noise_pct: null,
      method: "none",
      verdict: "no_baseline",
      rule: rule.text,
      severity: "none",
    };
    if (b.length > 0) {
      const baseFig = base.kind === "history" ? mean(b) : medianOf(b);
      row.base = baseFig;
      row.delta_pct = baseFig !== 0 ? pctOf(headFig - baseFig, baseFig) : null;
      const samples = () => {
        const q = sampledQuantile(p.measure);
        if (q === null || !base.samples || !head.samples || p.level === null) return null;
        const bs = base.samples(p.level, p.measure);
        const hs = head.samples(p.level, p.measure);
        return bs && hs ? { q, b: bs, h: hs } : null;
      };
      const j = judgeOne(b, h, baseFig, headFig, samples, rule, def.direction, o);
      row.method = j.method;
      row.interval_pct = j.interval;
      row.noise_pct = j.noise;
      row.verdict = j.verdict;
      row.severity = severityOf(j.verdict, gating);
    }
    rows.push(row);
  }
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const r of rows) counts[r.verdict]++;
  return {
    rows,
    counts,
    rules: rules.text,
    base_runs: base.runs.length,
    head_runs: head.runs.length,
    base_kind: base.kind,
  };
}
