/**
 * `tokenbench plan`: how big a run must be to see a change of X %, from a history of runs of one
 * workload. Each row's noise between runs is split into the part its requests make (a run's own
 * percentile, bootstrapped over its requests: it shrinks as 1/√requests) and the rest, the
 * run-to-run noise that no number of requests removes. From them: the change each row can detect
 * now at 80 % power as the gate judges it, and what it takes to detect X %: requests per level,
 * runs of history, or A/B pairs, with the time each costs (CONCEPTS.md §13, "Planning a run").
 */
import type { ResultDocument } from "../../schema/v1.ts";
import { ALL_LEVELS, withAllLevels } from "../../shared/all-levels.ts";
import { historyEvidence, runsOf } from "../../shared/evidence.ts";
import { medianOf as median } from "../../shared/repeats.ts";
import { samplingSe } from "../../shared/row-stats.ts";
import { isGated, parseGate } from "../../shared/rules.ts";
import { levelSamples, sampledQuantile } from "../../shared/samples.ts";
import { stddev, tQuantile } from "../../shared/statistics.ts";
import { measureName, wherePhrase } from "../../shared/verdict-text.ts";
import { VERDICT_DEFAULTS } from "../../shared/verdict-types.ts";
import { samplesNeeded } from "../results/validity.ts";

export interface PlanOptions {
  /** The change to detect, % of the base. */
  detectPct: number;
  /** The gate (its rows are judged as the gate judges them) and its false-fail rate, %. */
  gate: string | null;
  fwerPct: number;
  measures: readonly string[];
  /** The most each option may grow to. */
  maxRequests: number;
  maxRuns: number;
  maxPairs: number;
}

export const PLAN_DEFAULTS: PlanOptions = {
  detectPct: 10,
  gate: null,
  fwerPct: 5,
  measures: ["output_tok_s", "ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms"],
  maxRequests: 100_000,
  maxRuns: 100,
  maxPairs: 50,
};

export interface PlanRow {
  benchmark: string;
  measure: string;
  gated: boolean;
  runs: number;
  /** Requests per level the history's runs had (the median). */
  requests: number;
  /** Noise between runs (CV, %), and the part of it its requests make at `requests` (null: not sampled). */
  noise_pct: number;
  from_requests_pct: number | null;
  /** The change it can detect now at 80 % power with this history, %. */
  detectable_pct: number;
  /** What detecting `detectPct` takes (null: not within the option's bound). */
  requests_needed: number | null;
  runs_needed: number | null;
  pairs_needed: number | null;
  /** Minutes of one pass over the levels at `requests_needed` (or `requests`), and of the A/B job. */
  pass_min: number;
  ab_min: number | null;
  note: string | null;
}

const POWER = 0.8;

/** The one-sided critical value a row is judged at: the gate's share of the rate, else 95 % two-sided. */
function criticalOf(gated: boolean, curve: boolean, gatedRows: number, fwerPct: number, df: number): number {
  if (!gated) return tQuantile(0.975, df);
  // As shared/gate.ts splits the rate: ratio rows 19/20, the all-levels tier 19/20 of that (a max-t,
  // here its Bonferroni bound: a little above), each level's rows 1/20 of it (Bonferroni).
  const ratio = (fwerPct / 100) * (19 / 20);
  const alpha = (curve ? ratio * (19 / 20) : ratio / 20) / Math.max(1, gatedRows);
  return tQuantile(1 - alpha, df);
}

/** The smallest x in [lo, hi] for which ok(x), or null. */
function smallest(lo: number, hi: number, ok: (x: number) => boolean): number | null {
  for (let x = lo; x <= hi; x++) if (ok(x)) return x;
  return null;
}

export function planRun(docs: readonly ResultDocument[], opts: Partial<PlanOptions> = {}): PlanRow[] {
  const o = { ...PLAN_DEFAULTS, ...opts };
  const sweeps = docs.filter((d) => d.kind === "sweep");
  const ev = historyEvidence(sweeps.map((doc, i) => ({ id: `run-${i}`, doc })));
  const runs = withAllLevels(runsOf(ev), []).head;
  const gate = parseGate(o.gate);
  const target = Math.log1p(o.detectPct / 100);
  const levels = [...new Set(sweeps.flatMap((d) => d.levels.map((l) => l.level)))];
  const benchmarks = [...new Set(runs.flatMap((r) => r.points.map((p) => p.benchmark)))];
  const levelOf = new Map(runs.flatMap((r) => r.points.map((p) => [p.benchmark, p.level] as const)));
  // The gate's rows in each tier (its critical value is shared among them).
  const gatedCount = (curve: boolean) =>
    o.measures.reduce(
      (a, m) =>
        a +
        benchmarks.filter((b) => (b === ALL_LEVELS) === curve && isGated(gate, m, levelOf.get(b) ?? null))
          .length,
      0,
    );
  const out: PlanRow[] = [];
  for (const measure of o.measures)
    for (const benchmark of benchmarks) {
      const values = runs
        .map((r) => r.points.find((p) => p.benchmark === benchmark && p.measure === measure)?.value)
        .filter((v): v is number => v !== undefined && v > 0);
      if (values.length < 2) continue;
      const curve = benchmark === ALL_LEVELS;
      const level = levelOf.get(benchmark) ?? null;
      const atLevels = curve ? levels : [level!];
      const gated = isGated(gate, measure, level);
      const total = stddev(values.map(Math.log));
      // Requests per level and each level's pass time per request, over the history's runs.
      const lv = sweeps.flatMap((d) => d.levels.filter((l) => atLevels.includes(l.level)));
      const requests = Math.round(median(lv.map((l) => l.ok)));
      const secPerRequest =
        median(sweeps.map((d) => d.levels.reduce((a, l) => a + l.wall_time_s / Math.max(1, l.ok), 0))) || 0;
      // The part of the noise the requests make: each level's bootstrap SE of its log quantile.
      const q = sampledQuantile(measure);
      let samp: number | null = null;
      if (q !== null) {
        const per = atLevels.map((lvl) => {
          const ses = sweeps
            .map((d) => levelSamples(d, lvl, measure))
            .filter((g) => g !== null && g.values.length >= 5)
            .map((g) => samplingSe(g!, { iterations: 200, seed: 1 }))
            .filter((x): x is number => x !== null);
          return ses.length > 0 ? median(ses) : null;
        });
        if (per.every((x) => x !== null)) samp = Math.sqrt(per.reduce((a, x) => a + x! ** 2, 0)) / per.length;
      }
      // A few runs can show less spread than their requests alone make: the noise is at least that.
      const noise = Math.max(total, samp ?? 0);
      const between = Math.sqrt(Math.max(0, noise ** 2 - (samp ?? 0) ** 2));
      const sigmaAt = (r: number) => Math.sqrt(between ** 2 + (samp ?? 0) ** 2 * (requests / r));
      const crit = (df: number) => criticalOf(gated, curve, gatedCount(curve), o.fwerPct, df);
      const detects = (se: number, df: number) => (crit(df) + tQuantile(POWER, df)) * se;
      const n = values.length;
      const historyAt = (r: number, runsN: number) =>
        detects(sigmaAt(r) * Math.sqrt(1 + 1 / runsN), runsN - 1);
      // A/B: no part of the noise taken to cancel (the job's share is not known from a history).
      const pairsAt = (b: number) =>
        detects(Math.sqrt((2 * sigmaAt(requests) ** 2) / b), curve ? b - 1 : levels.length * (b - 1));
      const floor = q === null ? 1 : samplesNeeded(q);
      // Requests per level on a 25 % grid from the percentile's own floor.
      const grid = [...Array(48)].map((_, i) => Math.ceil(Math.max(floor, 8) * 1.25 ** i));
      const needR =
        samp === null
          ? null
          : (grid.filter((r) => r <= o.maxRequests).find((r) => historyAt(r, n) <= target) ?? null);
      // The gate judges a history from 5 runs (VERDICT_DEFAULTS.minHistory).
      const needRuns = smallest(
        VERDICT_DEFAULTS.minHistory,
        o.maxRuns,
        (k) => historyAt(requests, k) <= target,
      );
      const needPairs = smallest(2, o.maxPairs, (b) => pairsAt(b) <= target);
      const passMin = (secPerRequest * (needR ?? requests)) / 60;
      out.push({
        benchmark,
        measure,
        gated,
        runs: n,
        requests,
        noise_pct: 100 * noise,
        from_requests_pct: samp === null ? null : 100 * samp,
        detectable_pct: 100 * Math.expm1(historyAt(requests, n)),
        requests_needed: needR,
        runs_needed: needRuns,
        pairs_needed: needPairs,
        pass_min: passMin,
        ab_min: needPairs === null ? null : (2 * needPairs * secPerRequest * requests) / 60,
        note:
          q === null
            ? "no per-request samples: all of its noise is taken as run-to-run (more requests may help less than shown)"
            : requests < floor
              ? `p${Math.round(q * 100)} needs ≥ ${floor} requests per level to be judged at all`
              : needR === null && between > 0
                ? `run-to-run noise alone (CV ${(100 * between).toFixed(1)} %) is beyond ${o.detectPct} % with ${n} runs: more runs of history, or A/B`
                : null,
      });
    }
  return out;
}

/** The plan as a Markdown table, with what it assumes. */
export function planMarkdown(rows: readonly PlanRow[], o: Partial<PlanOptions> = {}): string {
  const p = { ...PLAN_DEFAULTS, ...o };
  const f = (x: number | null, d = 1) => (x === null ? "–" : x.toFixed(d));
  const lines = [
    `To detect a ${p.detectPct} % change at 80 % power (gated rows as the gate judges them, with its false-fail rate of ${p.fwerPct} % per pull request; other rows at 95 % two-sided), from ${rows[0]?.runs ?? 0} runs:`,
    "",
    "| measure | where | gated | noise between runs (CV) | of it from requests | detects now | requests per level | runs of history | A/B pairs (minutes) | note |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const r of rows)
    lines.push(
      `| ${measureName(r.measure)} | ${wherePhrase(r.benchmark) || r.benchmark} | ${r.gated ? "yes" : "no"} | ${f(r.noise_pct)} % | ${r.from_requests_pct === null ? "–" : `${f(r.from_requests_pct)} %`} | ≥ ${f(r.detectable_pct)} % | ${r.requests_needed ?? "–"} (now ${r.requests}) | ${r.runs_needed ?? "–"} | ${r.pairs_needed === null ? "–" : `${r.pairs_needed} (${f(r.ab_min, 0)})`} | ${r.note ?? ""} |`,
    );
  lines.push(
    "",
    "A/B pairs assume no part of the noise cancels within a job (a history cannot tell the job's share): with a runner whose noise is mostly the job's, fewer pairs do. Minutes are the history's own time per request, summed over its levels.",
  );
  return lines.join("\n");
}
