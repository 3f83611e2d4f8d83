/**
 * One row of the verdict engine (shared/verdict.ts), judged by the method its evidence allows:
 * a share of requests by the exact test, a ratio measure by A/B pairs, a base history, repeats,
 * a within-run bootstrap, or, where nothing measures the noise, the percentage rule. Each row
 * comes with what the gate needs of it when it is gated. Pure.
 */

import { ALL_LEVELS } from "./all-levels.ts";
import type { Evidence, RunFigures } from "./evidence.ts";
import { isFrontierRow } from "./frontier-rows.ts";
import type { GateRow } from "./gate.ts";
import type { MeasureDef } from "./measures.ts";
import { medianOf } from "./repeats.ts";
import { keyOf, resolutionOf, runValue, shareCounts } from "./row-facts.ts";
import {
  bootstrapStat,
  floorLog,
  historyStat,
  type LogStat,
  pairedSs,
  pairedStat,
  repeatsStat,
  shareStat,
  type Unit,
} from "./row-stats.ts";
import type { Method, Opts, Verdict, VerdictRow } from "./verdict-types.ts";

/** What every row of one comparison shares. */
export interface RowContext {
  o: Opts;
  base: Evidence;
  head: Evidence;
  headRuns: readonly RunFigures[];
  /** The head's A/B pairs, when it has them. */
  ab: Extract<Evidence, { kind: "ab" }> | null;
  /** The base is a history of jobs. */
  history: boolean;
  /** A/B: each measure's sum of squares and degrees of freedom, pooled over its levels. */
  pooled: ReadonlyMap<string, { ss: number; df: number }>;
}

export interface RowKey {
  key: string;
  benchmark: string;
  level: number | null;
  def: MeasureDef;
}

export interface Evaluated {
  row: VerdictRow;
  gate: GateRow | null;
  stat: LogStat | null;
  /** An informational row judged by an interval or a test: chance alone may flag it. */
  chance: boolean;
}

/** A/B: each pair's log(head / base) of a key, where both blocks have a positive value. */
export function pairDiffs(ab: RowContext["ab"], key: string): number[] {
  if (!ab) return [];
  const out: number[] = [];
  for (const p of ab.pairs) {
    const b = runValue(p.base, key);
    const h = runValue(p.head, key);
    if (b !== undefined && h !== undefined && b > 0 && h > 0) out.push(Math.log(h / b));
  }
  return out;
}

export function geoMean(xs: readonly number[]): number {
  return xs.every((x) => x > 0)
    ? Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length)
    : medianOf(xs);
}

const word = (def: MeasureDef, sign: number): Verdict =>
  sign > 0 === (def.direction === "higher") ? "improved" : "regressed";

/** A gated row the evidence cannot gate on: it says so and never fails the gate. */
const ungateable = (key: string, unit: Unit | null): GateRow => ({
  key,
  kind: "ratio",
  badLog: 0,
  se: 1,
  df: 1,
  unit,
  residuals: null,
  minLog: Number.POSITIVE_INFINITY,
});

/** A share of requests (error rate, SLO pass): points, the exact test per request. */
export function judgeShare(
  c: RowContext,
  row: VerdictRow,
  k: RowKey,
  baseRuns: readonly RunFigures[],
  minPp: number,
): Evaluated {
  const { def } = k;
  const b = shareCounts(def, baseRuns, k.benchmark, k.key);
  const h = shareCounts(def, c.headRuns, k.benchmark, k.key);
  const sign = def.direction === "lower" ? 1 : -1; // the measure's own direction against its bad share
  if (b.of === 0 || h.of === 0) {
    // Figures without their counts (a document's points alone): points, by the smallest change.
    const scale = def.name === "error_rate" ? 100 : 1;
    row.method = "percent";
    row.delta_pct = null;
    row.delta_pp = scale * ((row.head ?? 0) - (row.base ?? 0));
    const bad = sign * row.delta_pp;
    row.verdict = bad > minPp ? "regressed" : -bad > minPp ? "improved" : "unchanged";
    return { row, gate: row.gated ? ungateable(k.key, null) : null, stat: null, chance: false };
  }
  const s = shareStat(b, h, c.o.confidence);
  row.method = "exact";
  row.independent = "request";
  row.delta_pct = null;
  row.delta_pp = sign * s.deltaPp;
  row.interval_pp = sign > 0 ? s.intervalPp : [-s.intervalPp[1], -s.intervalPp[0]];
  const a = (1 - c.o.confidence) / 2;
  row.verdict =
    s.pRise < a && s.deltaPp > minPp
      ? "regressed"
      : s.pFall < a && -s.deltaPp > minPp
        ? "improved"
        : "unchanged";
  return {
    row,
    gate: row.gated
      ? {
          key: keyOf(k.benchmark, def.name),
          kind: "share",
          share: { base: b, head: h, pRise: s.pRise, deltaPp: s.deltaPp, minPp },
        }
      : null,
    stat: null,
    chance: !row.gated,
  };
}

/** The method the evidence allows for a ratio row, and its statistics (null: nothing measures the noise). */
function ratioStat(
  c: RowContext,
  k: RowKey,
  bv: readonly number[],
  hv: readonly number[],
  floor: number,
): { stat: LogStat | null; method: Method; unit: Unit | null } {
  const none = { stat: null, method: "percent" as Method, unit: null };
  if (!(bv.every((x) => x > 0) && hv.every((x) => x > 0))) return none;
  if (c.ab) {
    const d = pairDiffs(c.ab, k.key);
    // A level's spread is pooled over its measure's levels; the all-levels row has its own.
    const p = k.level === null ? pairedSs(d) : c.pooled.get(k.def.name);
    return d.length >= 2 && p && p.df > 0
      ? { stat: pairedStat(d, p, floor, c.o.confidence), method: "ab-paired", unit: "block" }
      : none;
  }
  if (c.history && bv.length >= 2)
    return { stat: historyStat(bv, medianOf(hv), floor, c.o.confidence), method: "history-t", unit: "job" };
  if (bv.length + hv.length >= 3)
    return { stat: repeatsStat(bv, hv, floor, c.o.confidence), method: "repeats-t", unit: "repeat" };
  if (
    c.base.kind === "run" &&
    c.head.kind === "run" &&
    c.base.samples &&
    c.head.samples &&
    k.level !== null
  ) {
    const sb = c.base.samples(k.level, k.def.name);
    const sh = c.head.samples(k.level, k.def.name);
    if (sb && sh && sb.values.length >= 5 && sh.values.length >= 5) {
      const stat = bootstrapStat(sb, sh, c.o);
      if (stat) return { stat, method: "bootstrap", unit: "request" };
    }
  }
  return none;
}

/** A ratio measure (throughput, latency): on the logarithm of its figures. */
export function judgeRatio(
  c: RowContext,
  row: VerdictRow,
  k: RowKey,
  bv: readonly number[],
  hv: readonly number[],
  minPct: number,
): Evaluated {
  const { def } = k;
  const facts = c.headRuns[0]?.facts.get(k.benchmark);
  const floor = row.head! > 0 ? floorLog(resolutionOf(def, row.head!, facts), row.head!) : 0;
  const { stat, method, unit } = ratioStat(c, k, bv, hv, floor);
  row.method = method;
  row.independent = unit;
  if (stat === null) {
    // Nothing measures the noise: the percentage rule (the `*` rule's own, or the fallback).
    const pct = minPct > c.o.minEffectPct ? minPct : c.o.fallbackPct;
    row.verdict =
      row.delta_pct !== null && Math.abs(row.delta_pct) > pct ? word(def, row.delta_pct) : "unchanged";
    return { row, gate: row.gated ? ungateable(k.key, null) : null, stat: null, chance: false };
  }
  row.noise_pct = stat.noisePct;
  const [lo, hi] = stat.interval ?? [stat.centre - stat.half, stat.centre + stat.half];
  row.interval_pct = [100 * (Math.exp(lo) - 1), 100 * (Math.exp(hi) - 1)];
  if (method === "ab-paired" || method === "history-t") row.delta_pct = 100 * (Math.exp(stat.centre) - 1);
  const big = Math.abs(row.delta_pct ?? 0) > minPct;
  const wide = (row.interval_pct[1] - row.interval_pct[0]) / 2 > c.o.noiseLimitPct;
  row.verdict = (lo > 0 || hi < 0) && big ? word(def, stat.centre) : wide ? "too_noisy" : "unchanged";
  const bad = def.direction === "lower" ? 1 : -1;
  const canGate = stat.se !== null && stat.df !== null && (method === "ab-paired" || method === "history-t");
  const gate: GateRow | null = !row.gated
    ? null
    : canGate
      ? {
          key: k.key,
          kind: "ratio",
          badLog: bad * stat.centre,
          se: stat.se!,
          df: stat.df!,
          unit,
          residuals: stat.residuals ? stat.residuals.map((x) => bad * x) : null,
          group:
            k.level === null ? (isFrontierRow(k.benchmark) ? k.key : `${def.name} ${ALL_LEVELS}`) : def.name,
          tier: k.level === null ? "curve" : "level",
          minLog: Math.log1p(minPct / 100),
          higher: def.direction === "higher",
        }
      : ungateable(k.key, unit);
  return { row, gate, stat, chance: !row.gated };
}
