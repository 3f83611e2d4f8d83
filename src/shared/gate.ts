/**
 * The gate: one decision per pull request from the gated rows (shared/rules.ts `Gate`), judged
 * one-sided in the bad direction with the family-wise error rate across them held at `fwer`
 * (CONCEPTS.md §13 "The gate"):
 *   - the all-levels ratio rows (throughput, latency over the whole curve) by a single-step max-t,
 *     whose critical value comes from their correlation (shared/gate-stats.ts): rows that move
 *     together (a slow job is slow everywhere) cost less of the error rate than independent ones;
 *   - each level's ratio rows, a backstop for a change at one level, by Bonferroni;
 *   - share rows (error rate, SLO pass) by the exact test per request, Bonferroni over them, with
 *     a twentieth of the error rate (a server that breaks is far beyond any bound: 0 → 25 % of 64
 *     requests has p < 10⁻⁸);
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
  /** Why not judged, in a few words, and where (for the gate's words). */
  why?: string;
  where?: string;
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
/**
 * The all-levels rows' share of the ratio rows' error rate. A whole curve moving is the common
 * case, and each all-levels row averages its levels' own noise; the level rows keep a twentieth,
 * enough to fail on a large change at one level (a critical value near 4 at 10 base jobs), since
 * at a fifth they cost the all-levels rows about 7 points of power for a 10 % change at 3 % noise.
 */
const CURVE_SHARE = 0.95;
/** The share rows' part of the error rate when ratio rows can gate too. */
const SHARE_PART = 1 / 20;

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
      "max-t over the all-levels rows (19/20 of the rate, from their correlation), Bonferroni over the level rows (1/20), exact test per share row (1/20)",
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
  const shareAlpha = share.length === 0 ? 0 : ratio.length > 0 && canGate ? alpha * SHARE_PART : alpha;
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
    // take most of the error rate by a max-t over them; each level's rows the rest, Bonferroni
    // over them (at a twentieth of the rate a max-t gains little over it, and costs a simulation
    // of every level's rows); a union bound between the tiers.
    const curve = ratio.filter((r) => r.tier === "curve");
    const levels = ratio.filter((r) => r.tier !== "curve");
    const both = curve.length > 0 && levels.length > 0;
    const judge = (r: GateRow, critical: number) => {
      const t = r.badLog! / r.se!;
      const hit = t > critical && r.badLog! > r.minLog!;
      out.regressed[r.key] = hit;
      const power = r.df! > 0 ? tQuantile(POWER, r.df!) : 0;
      const x = Math.max(r.minLog!, (critical + power) * r.se!);
      out.detectable[r.key] = 100 * (r.higher ? 1 - Math.exp(-x) : Math.exp(x) - 1);
      if (hit) out.failed.push(r.key);
    };
    if (curve.length > 0) {
      const c = tierCritical(curve, o.design, ratioAlpha * (both ? CURVE_SHARE : 1));
      out.critical.curve = c.critical;
      out.correlation = c.correlation;
      for (const r of curve) judge(r, c.critical);
    }
    if (levels.length > 0) {
      const each = (ratioAlpha * (both ? 1 - CURVE_SHARE : 1)) / levels.length;
      for (const r of levels) {
        const critical = tQuantile(1 - each, Math.max(1, r.df!));
        out.critical.level = Math.max(out.critical.level ?? 0, critical);
        judge(r, critical);
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
  if (notJudged.length > 0) {
    // One cause per phrase, with where it held: "head client-bound at c=1, c=4".
    const byWhy = new Map<string, string[]>();
    for (const r of notJudged) {
      const at = (r.where ?? "").replace(/^closed /, "").replace(/^open /, "");
      const list = byWhy.get(r.why ?? "?") ?? [];
      if (at && !list.includes(at)) list.push(at);
      byWhy.set(r.why ?? "?", list);
    }
    const causes = [...byWhy].map(([why, at]) => (at.length ? `${why} at ${at.join(", ")}` : why));
    return {
      ...out,
      status: "cannot_judge",
      reason: `${notJudged.length} gated row${notJudged.length === 1 ? "" : "s"} not judged: ${causes.slice(0, 3).join("; ")}${causes.length > 3 ? `; and ${causes.length - 3} more` : ""}`,
    };
  }
  return out;
}
