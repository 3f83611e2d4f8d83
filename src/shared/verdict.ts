/**
 * The one verdict engine. `tokenbench compare`, the Action's comment (file, artifact or service
 * baseline), the service's compare endpoint, its badges and trend points, and the dashboard's
 * pages all call `judgeRuns` and only format its rows and its gate, so one pair of runs gets one
 * verdict everywhere (CONCEPTS.md §13).
 *
 * Each row is judged by the method its evidence allows, and names it and the unit its noise is
 * counted in:
 *   ab-paired  the head document alternated base and head servers in blocks (`--ab`): a paired
 *              t over the pairs, spread pooled over one measure's levels (unit: block);
 *   history-t  a base history of jobs: the prediction interval for one new job, after invalid
 *              runs, outlier runs and runs before the base's last change point are left out
 *              (unit: job);
 *   repeats-t  repeats of one job on a side: Welch's t, within the job (unit: repeat);
 *   bootstrap  one run each side: whole requests resampled, within one run (unit: request);
 *   exact      a share of requests (error rate, SLO pass): Fisher's exact test (unit: request);
 *   percent    nothing measures the noise, or the `*` rule is `+N%`.
 * The gate's rows (shared/gate.ts) decide the pull request; every other row is informational
 * (two-sided, 95 %). A row whose level is not valid on either side is "not judged", with why.
 */

import { withAllLevels } from "./all-levels.ts";
import { keptHistory } from "./base-history.ts";
import { consistencyDiff } from "./consistency.ts";
import { environmentChanges } from "./environment-diff.ts";
import { type Evidence, NO_EVIDENCE, type RunFigures, runsOf } from "./evidence.ts";
import { minOf } from "./extremes.ts";
import { replacedByFrontier, ungated, withFrontier } from "./frontier-rows.ts";
import { decideGate, type GateOutcome, type GateRow } from "./gate.ts";
import { isShare, MEASURE_BY_NAME } from "./measures.ts";
import { medianOf } from "./repeats.ts";
import { finishDiffers, indexRuns, invalidLabel, invalidOn, keyOf, runValue } from "./row-facts.ts";
import { withSplits } from "./row-splits.ts";
import { pairedSs } from "./row-stats.ts";
import { type FailOn, fails, isGated, parseGate, parseRules, ruleFor, severityOf } from "./rules.ts";
import {
  type Evaluated,
  geoMean,
  judgeRatio,
  judgeShare,
  pairDiffs,
  type RowContext,
  type RowKey,
} from "./verdict-rows.ts";
import {
  type Opts,
  VERDICT_DEFAULTS,
  VERDICTS,
  type Verdict,
  type VerdictOptions,
  type VerdictRow,
  type VerdictSummary,
} from "./verdict-types.ts";

export { documentEvidence, type Evidence, historyEvidence, NO_EVIDENCE } from "./evidence.ts";
export type { GateOutcome } from "./gate.ts";
export * from "./verdict-types.ts";

/**
 * Head evidence against base evidence under the rules: one row per benchmark and measure the
 * head has (and per measure the base has at a level the head measured), and the gate. Pure,
 * deterministic.
 */
export function judgeRuns(base: Evidence, head: Evidence, opts: VerdictOptions = {}): VerdictSummary {
  const o: Opts = { ...VERDICT_DEFAULTS, ...opts } as Opts;
  const rules = opts.rules ?? parseRules(null);
  const gate = parseGate(opts.gate ?? null, rules);
  const excluded: VerdictSummary["excluded"] = [];
  const abIn = head.kind === "ab" ? head : null;
  const baseEv: Evidence = abIn ? { kind: "repeats", runs: abIn.pairs.map((p) => p.base) } : base;
  const keysOf = (runs: readonly RunFigures[], headOnly: readonly RunFigures[]) => {
    // The head's, in its order, then the base's at levels the head measured.
    const out: RowKey[] = [];
    const seen = new Set<string>();
    const headLevels = new Set(headOnly.flatMap((r) => r.points.map((p) => p.benchmark)));
    for (const r of runs)
      for (const p of r.points) {
        const key = keyOf(p.benchmark, p.measure);
        const def = MEASURE_BY_NAME.get(p.measure);
        // a part of another measure is no row of its own: it splits that measure's row (row-splits.ts)
        if (!def || def.part_of || seen.has(key) || !headLevels.has(p.benchmark)) continue;
        seen.add(key);
        out.push({ key, benchmark: p.benchmark, level: p.level, def });
      }
    return out;
  };
  const levelKeys = keysOf([...runsOf(head), ...runsOf(baseEv)], runsOf(head));
  const gatedKeys = levelKeys.filter((k) => isGated(gate, k.def.name, k.level) && !ungated(k.benchmark));
  const kept = baseEv.kind === "history" ? keptHistory(baseEv.runs, gatedKeys, excluded) : runsOf(baseEv);
  // Each ratio measure over all levels, beside each level (all-levels.ts).
  const levelled = withAllLevels(runsOf(head), kept);
  // The frontier's rows: the curve read at the speeds per user both sides cover (frontier-rows.ts).
  const { head: headRuns, base: baseRuns, span } = withFrontier(levelled.head, levelled.base);
  const ab = abIn
    ? { kind: "ab" as const, pairs: abIn.pairs.map((_, i) => ({ base: baseRuns[i]!, head: headRuns[i]! })) }
    : null;
  const keys = keysOf([...headRuns, ...baseRuns], headRuns);
  const headIdx = indexRuns(headRuns);
  const history = baseEv.kind === "history";
  const evidenceKind: GateOutcome["evidence"] = ab
    ? "ab"
    : history && baseRuns.length >= o.minHistory
      ? "history"
      : history && baseRuns.length > 0
        ? "short-history"
        : baseRuns.length === 0
          ? "none"
          : head.kind === "repeats" || baseEv.kind === "repeats"
            ? "within-job"
            : "within-run";
  // A/B: each measure's spread pooled over its levels (rows whose levels are valid on both sides).
  const pooled = new Map<string, { ss: number; df: number }>();
  for (const k of ab ? keys : []) {
    if (
      isShare(k.def) ||
      k.level === null ||
      invalidOn(headRuns, k.benchmark, k.def) ||
      invalidOn(baseRuns, k.benchmark, k.def)
    )
      continue;
    const d = pairDiffs(ab, k.key);
    if (d.length < 2) continue;
    const s = pairedSs(d);
    const p = pooled.get(k.def.name) ?? { ss: 0, df: 0 };
    pooled.set(k.def.name, { ss: p.ss + s.ss, df: p.df + s.df });
  }
  const ctx: RowContext = { o, base, head, headRuns, ab, history, pooled };

  /**
   * A row the head has no value for. Something broke when every request of its level failed (a
   * latency, rate or SLO row then regresses); a value missing because its level is not valid (or,
   * over all levels, some level is not) is not judged, with that reason; any other latency, rate
   * or SLO value that vanished regresses; the rest are not judged.
   */
  const missingInHead = (
    k: RowKey,
    row: VerdictRow,
    done: (g: GateRow["kind"] | null, extra?: Partial<GateRow>) => Evaluated,
    gating: boolean,
  ): Evaluated => {
    const { def } = k;
    const f = headRuns[0]?.facts.get(k.benchmark);
    const broke = def.family === "latency" || def.family === "rate" || def.family === "slo";
    const regress = (why: string) => {
      row.reason = `no value in the head: ${why}`;
      row.verdict = "regressed";
      row.severity = severityOf("regressed", gating);
      return done("missing");
    };
    if (broke && f && f.requests > 0 && f.errors === f.requests) return regress("every request failed");
    // Its own level's reason, or for the all-levels row the first level whose reason covers it.
    const at =
      k.level === null
        ? [...(headRuns[0]?.facts.keys() ?? [])].find((b) => invalidOn(headRuns, b, def) !== null)
        : invalidOn(headRuns, k.benchmark, def) !== null
          ? k.benchmark
          : undefined;
    if (at !== undefined) {
      row.reason = `head ${invalidOn(headRuns, at, def)}${at !== k.benchmark ? ` (${at})` : ""}`;
      row.verdict = "not_judged";
      return done("not_judged", { why: `head ${invalidLabel(headRuns, at, def)}`, where: at });
    }
    if (broke) return regress("the head has no value for it");
    row.reason = "no value in the head: the head has no value for it";
    row.verdict = "not_judged";
    return done("not_judged", { why: "no value in the head", where: k.benchmark });
  };

  const evaluate = (k: RowKey): Evaluated => {
    const { def } = k;
    const { rule, gating } = ruleFor(rules, def.name);
    // A frontier point chosen after looking, or read at a target speed, is not gated (frontier-rows.ts).
    const gated =
      isGated(gate, def.name, k.level) &&
      rule.kind !== "off" &&
      !ungated(k.benchmark) &&
      !(span !== null && replacedByFrontier(k.benchmark, def.name));
    const hv = headIdx.map((m) => m.get(k.key)).filter((v): v is number => v !== undefined);
    const bRuns = baseRuns.filter((r) => !(history && invalidOn([r], k.benchmark, def)));
    const bv = bRuns.map((r) => runValue(r, k.key)).filter((v): v is number => v !== undefined);
    const row: VerdictRow = {
      benchmark: k.benchmark,
      level: k.level,
      measure: def.name,
      unit: def.unit,
      direction: def.direction,
      base: bv.length > 0 ? (history || ab ? geoMean(bv) : medianOf(bv)) : null,
      base_n: bv.length,
      head: hv.length > 0 ? (ab ? geoMean(hv) : medianOf(hv)) : null,
      head_n: hv.length,
      delta_pct: null,
      delta_pp: null,
      interval_pct: null,
      interval_pp: null,
      noise_pct: null,
      method: "none",
      independent: null,
      verdict: "no_baseline",
      reason: null,
      gated,
      decided: false,
      detectable: null,
      rule: rule.text,
      severity: "none",
    };
    const done = (g: GateRow["kind"] | null, extra: Partial<GateRow> = {}): Evaluated => ({
      row,
      gate: gated && g ? { key: k.key, kind: g, ...extra } : null,
      stat: null,
      chance: false,
    });
    // Measured, but on no base run valid for it: not judged below, as one invalid base run is (a
    // history of invalid runs is no weaker evidence than one, and the gate cannot pass it).
    const allInvalid =
      bv.length > 0 || !baseRuns.some((r) => runValue(r, k.key) !== undefined)
        ? null
        : invalidOn(baseRuns, k.benchmark, def);
    if (bv.length === 0 && allInvalid === null) {
      row.reason = baseRuns.length === 0 ? null : "the base did not measure it";
      return done("no_baseline");
    }
    if (row.base !== null && row.head !== null && row.base !== 0)
      row.delta_pct = (100 * (row.head - row.base)) / Math.abs(row.base);
    if (hv.length === 0) return missingInHead(k, row, done, gated || gating);
    if (rule.kind === "off") {
      row.method = "off";
      row.verdict = "unchanged";
      return done(null);
    }
    const headBad = invalidOn(headRuns, k.benchmark, def);
    // a history's invalid runs are left out row by row, so only all of them invalid says so
    const baseBad = history
      ? allInvalid && `${allInvalid} (all ${baseRuns.length} runs)`
      : invalidOn(baseRuns, k.benchmark, def);
    const finish = def.family === "errors" ? null : finishDiffers(baseRuns, headRuns, k.benchmark);
    const notJudged = headBad ? `head ${headBad}` : baseBad ? `base ${baseBad}` : finish;
    if (notJudged !== null) {
      row.verdict = "not_judged";
      row.reason = notJudged;
      const label = headBad
        ? `head ${invalidLabel(headRuns, k.benchmark, def)}`
        : baseBad
          ? `base ${invalidLabel(baseRuns, k.benchmark, def)}`
          : "finish reasons moved";
      return done("not_judged", { why: label, where: k.benchmark });
    }
    const minPct = rule.kind === "percent" ? rule.pct : o.minEffectPct;
    return isShare(def) ? judgeShare(ctx, row, k, bRuns, minPct) : judgeRatio(ctx, row, k, bv, hv, minPct);
  };

  const evaluated = keys.map(evaluate);
  const gateRows = evaluated.map((e) => e.gate).filter((g): g is GateRow => g !== null);
  const hasCurve = evaluated.some((e) => e.gate?.kind === "ratio" && e.gate.tier === "curve");
  const design =
    evidenceKind === "history"
      ? {
          kind: "history" as const,
          // the max-t's simulation is of the all-levels rows' history (the level rows are Bonferroni's)
          n: minOf(
            evaluated
              .filter((e) => e.gate?.kind === "ratio" && (e.gate.tier === "curve" || !hasCurve))
              .map((e) => e.row.base_n),
          ),
        }
      : evidenceKind === "ab"
        ? { kind: "paired" as const, blocks: ab!.pairs.length }
        : null;
  const outcome = decideGate(gateRows, evidenceKind, {
    fwerPct: o.fwerPct,
    off: gate.off,
    minHistory: o.minHistory,
    baseRuns: baseRuns.length,
    design,
  });
  for (const e of evaluated) {
    const r = e.row;
    const key = keyOf(r.benchmark, r.measure);
    if (!r.gated) {
      r.severity = severityOf(r.verdict, false);
      continue;
    }
    r.detectable = outcome.detectable[key] ?? null;
    const judgedByGate =
      e.gate?.kind === "share" ||
      (e.gate?.kind === "ratio" && (evidenceKind === "history" || evidenceKind === "ab"));
    if (judgedByGate) {
      if (outcome.regressed[key]) r.verdict = "regressed";
      else if (r.verdict === "regressed") r.verdict = "unchanged"; // beyond 95 % two-sided, not beyond the family's bound
      // (a gated row that could only see a large change says so in its detectable change)
    }
    r.decided = judgedByGate || e.gate?.kind === "missing";
    r.severity =
      r.verdict === "regressed" && (judgedByGate || e.gate?.kind === "missing")
        ? "regression"
        : severityOf(r.verdict, false);
  }
  const rows = evaluated.map((e) => e.row);
  withSplits(rows, headRuns, (r) =>
    history
      ? baseRuns.filter((b) => !invalidOn([b], r.benchmark, MEASURE_BY_NAME.get(r.measure)!))
      : baseRuns,
  );
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const r of rows) counts[r.verdict]++;
  const chanceRows = evaluated.filter(
    (e) => (e.chance && e.row.interval_pct !== null) || (e.chance && e.row.method === "exact"),
  ).length;
  return {
    rows,
    counts,
    rules: rules.text,
    gate: { ...outcome, text: gate.text },
    base_runs: baseRuns.length,
    head_runs: headRuns.length,
    base_kind: ab ? "ab" : base.kind,
    excluded,
    environment: environmentChanges(baseRuns, headRuns),
    consistency: consistencyDiff(baseRuns[baseRuns.length - 1]?.answers, headRuns[0]?.answers),
    chance_flags: { rows: chanceRows, expected: chanceRows * ((1 - o.confidence) / 2) },
    baseline_note: null,
  };
}

/** Whether a comparison fails a check under `failOn` (shared/rules.ts `fails`). */
export const summaryFails = (s: VerdictSummary, failOn: FailOn): boolean =>
  fails({ gate: s.gate.status, severities: s.rows.map((r) => r.severity) }, failOn);

export const judgeNothing = (head: Evidence, opts?: VerdictOptions) => judgeRuns(NO_EVIDENCE, head, opts);
