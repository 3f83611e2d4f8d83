/**
 * The gate: one decision per pull request from the gated rows (shared/rules.ts `Gate`), judged
 * one-sided in the bad direction with the family-wise error rate across them held at `fwer`
 * (CONCEPTS.md §13 "The gate"):
 *   - ratio rows (throughput, latency) by a single-step max-t over the rows, whose critical value
 *     comes from their common correlation (shared/gate-stats.ts): rows that move together (a slow
 *     job is slow everywhere) cost less of the error rate than independent ones;
 *   - share rows (error rate, SLO pass) by the exact test per request, Bonferroni over them, with
 *     a tenth of the error rate (a server that breaks is far beyond any bound);
 *   - a gated row the head has no value for is a failure (something broke, not noise).
 * Only evidence that sees the noise between jobs can fail ratio rows: a base history or A/B
 * blocks. Pure and seeded.
 */
import {
  type Design,
  maxTCritical,
  meanCorrelation,
  shrunkCorrelation,
  smallestFlagged,
} from "./gate-stats.ts";
import type { ShareCounts, Unit } from "./row-stats.ts";
import { tQuantile } from "./statistics.ts";

export type GateStatus = "passed" | "failed" | "not_gated" | "cannot_judge" | "no_baseline" | "off";

/** What the gate needs of a gated row. */
export interface GateRow {
  key: string;
  /** "ratio": a max-t row; "share": an exact-test row; "missing": no value in the head; null: not judged. */
  kind: "ratio" | "share" | "missing" | "not_judged" | "no_baseline";
  /** Ratio rows: the one-sided statistic's parts (log change in the bad direction, its standard error). */
  badLog?: number;
  se?: number;
  df?: number;
  unit?: Unit | null;
  residuals?: number[] | null;
  /** The pooling group (A/B: one measure's levels). */
  group?: string;
  /** "curve": an all-levels row; "level": one level's. */
  tier?: "curve" | "level";
  /** The smallest change that counts, as a log ratio (the rule's +N %, else 1 %). */
  minLog?: number;
  /** Higher is better (a regression is a drop): how a detectable log change reads in %. */
  higher?: boolean;
  /** Share rows: the counts and the smallest change in points that counts. */
  share?: { base: ShareCounts; head: ShareCounts; pRise: number; deltaPp: number; minPp: number };
  /** Why not judged (for the gate's words). */
  why?: string;
}

export interface GateOutcome {
  status: GateStatus;
  /** Held family-wise false-fail rate (%), and how it was held. */
  fwer_pct: number;
  procedure: string;
  /** Rows in the gate, rows it judged, rows that failed it (their keys). */
  rows: number;
  judged: number;
  failed: string[];
  /** The max-t's critical values (all-levels rows, level rows) and the rows' mean correlation. */
  critical: { curve: number | null; level: number | null };
  correlation: number | null;
  /** What the evidence is and, when it cannot gate, what would let it. */
  evidence: "history" | "ab" | "short-history" | "within-run" | "within-job" | "none";
  reason: string | null;
  /** Per gated row: the smallest regression it could detect at 80 % power (% or pp). */
  detectable: Record<string, number | null>;
  /** Per gated row: whether it regressed by the gate. */
  regressed: Record<string, boolean>;
}

const POWER = 0.8;
/** The all-levels rows' share of the ratio rows' error rate: a whole curve moving is the common case. */
const CURVE_SHARE = 0.8;

/** A tier's max-t critical value: its rows in the design's order, their shrunk correlation. */
function tierCritical(
  tier: readonly GateRow[],
  d: { kind: "history"; n: number } | { kind: "paired"; blocks: number },
  alpha: number,
): { critical: number; correlation: number } {
  // The A/B design pools each group's spread: its rows sit together, in group order.
  const groups = [...new Set(tier.map((r) => r.group ?? r.key))];
  const ordered =
    d.kind === "paired" ? groups.flatMap((g) => tier.filter((r) => (r.group ?? r.key) === g)) : tier;
  const design: Design =
    d.kind === "paired"
      ? {
          kind: "paired",
          blocks: d.blocks,
          groups: groups.map((g) => tier.filter((r) => (r.group ?? r.key) === g).length),
        }
      : d;
  const { r: corr } = shrunkCorrelation(ordered.map((r) => r.residuals ?? []));
  return { critical: maxTCritical(design, corr, alpha), correlation: meanCorrelation(corr) };
}

/**
 * The gate's decision over its rows. `evidence` is what the ratio rows rest on: only "history"
 * and "ab" see run-to-run noise, so only they can fail a ratio row.
 */
export function decideGate(
  rows: readonly GateRow[],
  evidence: GateOutcome["evidence"],
  o: {
    fwerPct: number;
    off: boolean;
    minHistory: number;
    baseRuns: number;
    /** How the ratio rows' statistics were made: n base jobs, or b A/B pairs (spread pooled per group). */
    design: { kind: "history"; n: number } | { kind: "paired"; blocks: number } | null;
  },
): GateOutcome {
  const alpha = o.fwerPct / 100;
  const out: GateOutcome = {
    status: "passed",
    fwer_pct: o.fwerPct,
    procedure:
      "max-t over the all-levels rows (4/5 of the rate) and over the level rows (1/5), from their correlation; exact test per share row (1/10)",
    rows: rows.length,
    judged: 0,
    failed: [],
    critical: { curve: null, level: null },
    correlation: null,
    evidence,
    reason: null,
    detectable: {},
    regressed: {},
  };
  if (o.off) return { ...out, status: "off", procedure: "off", reason: "gate: off" };
  const ratio = rows.filter((r) => r.kind === "ratio");
  const share = rows.filter((r) => r.kind === "share");
  const canGate = evidence === "history" || evidence === "ab";
  const shareAlpha = share.length === 0 ? 0 : ratio.length > 0 && canGate ? alpha / 10 : alpha;
  const ratioAlpha = alpha - shareAlpha;
  for (const r of share) {
    const s = r.share!;
    const each = shareAlpha / share.length;
    const hit = s.pRise < each && s.deltaPp > s.minPp;
    out.regressed[r.key] = hit;
    const k = smallestFlagged(s.base.bad, s.base.of, s.head.of, each);
    const baseShare = s.base.of > 0 ? s.base.bad / s.base.of : 0;
    out.detectable[r.key] =
      k === null ? null : Math.max(s.minPp, 100 * (k / Math.max(1, s.head.of) - baseShare));
    if (hit) out.failed.push(r.key);
  }
  if (canGate && ratio.length > 0 && o.design !== null) {
    // Two tiers: the all-levels rows (a change of the whole curve, each level's noise averaged)
    // take most of the error rate, each level's rows the rest; a max-t within each (a union bound
    // between them).
    const tiers = [ratio.filter((r) => r.tier === "curve"), ratio.filter((r) => r.tier !== "curve")].filter(
      (t) => t.length > 0,
    );
    const shareOf = (t: GateRow[]) =>
      tiers.length === 1 ? 1 : t[0]!.tier === "curve" ? CURVE_SHARE : 1 - CURVE_SHARE;
    for (const tier of tiers) {
      const c = tierCritical(tier, o.design, ratioAlpha * shareOf(tier));
      out.critical[tier[0]!.tier === "curve" ? "curve" : "level"] = c.critical;
      out.correlation = Math.max(out.correlation ?? 0, c.correlation);
      for (const r of tier) {
        const t = r.badLog! / r.se!;
        const hit = t > c.critical && r.badLog! > r.minLog!;
        out.regressed[r.key] = hit;
        const power = r.df! > 0 ? tQuantile(POWER, r.df!) : 0;
        const x = Math.max(r.minLog!, (c.critical + power) * r.se!);
        out.detectable[r.key] = 100 * (r.higher ? 1 - Math.exp(-x) : Math.exp(x) - 1);
        if (hit) out.failed.push(r.key);
      }
    }
  } else for (const r of ratio) out.detectable[r.key] = null;
  const missing = rows.filter((r) => r.kind === "missing");
  for (const r of missing) {
    out.regressed[r.key] = true;
    out.failed.push(r.key);
  }
  const notJudged = rows.filter((r) => r.kind === "not_judged");
  out.judged = share.length + missing.length + (canGate ? ratio.length : 0);
  if (out.failed.length > 0) return { ...out, status: "failed" };
  if (rows.length > 0 && rows.every((r) => r.kind === "no_baseline"))
    return { ...out, status: "no_baseline", reason: "no gated row has a baseline" };
  if (ratio.length > 0 && !canGate)
    return {
      ...out,
      status: "not_gated",
      reason:
        evidence === "within-job"
          ? `repeats in one job cannot see what the job shares (its runner, its GPU's state): a base history of ${o.minHistory}+ runs (the results service) or --ab would let it gate`
          : evidence === "short-history"
            ? `the base history has ${o.baseRuns} usable run${o.baseRuns === 1 ? "" : "s"}, ${o.minHistory} are needed to gate (or --ab)`
            : `one run each side cannot see run-to-run noise: a base history of ${o.minHistory}+ runs (the results service) or --ab would let it gate`,
    };
  if (notJudged.length > 0)
    return {
      ...out,
      status: "cannot_judge",
      reason: `${notJudged.length} gated row${notJudged.length === 1 ? "" : "s"} not judged: ${[...new Set(notJudged.map((r) => r.why ?? "?"))].slice(0, 3).join("; ")}`,
    };
  return out;
}
