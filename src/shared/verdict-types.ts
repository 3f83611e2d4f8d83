/**
 * The verdict engine's vocabulary (shared/verdict.ts): methods, verdicts, options, rows and the
 * summary every surface formats.
 */

import type { ConsistencyDiff } from "./consistency.ts";
import type { EnvChange } from "./environment-diff.ts";
import type { Evidence } from "./evidence.ts";
import type { GateOutcome } from "./gate.ts";
import type { SplitSource } from "./measure-types.ts";
import type { Direction } from "./measures.ts";
import type { Unit } from "./row-stats.ts";
import type { Rules, Severity } from "./rules.ts";

export type Method =
  | "ab-paired"
  | "history-t"
  | "repeats-t"
  | "bootstrap"
  | "exact"
  | "percent"
  | "off"
  | "none";
export type Verdict = "regressed" | "improved" | "unchanged" | "too_noisy" | "not_judged" | "no_baseline";
export const VERDICTS: readonly Verdict[] = [
  "regressed",
  "improved",
  "too_noisy",
  "not_judged",
  "unchanged",
  "no_baseline",
];

export interface VerdictOptions {
  rules?: Rules;
  /** The gate (`gate:` / `--gate`), as given; default the key measures. */
  gate?: string | null;
  /** Family-wise false-fail rate of the gate, % (5). */
  fwerPct?: number;
  /** Two-sided confidence of every informational interval (0.95). */
  confidence?: number;
  /** Base jobs the gate needs from a history (5); history-t is used from 2. */
  minHistory?: number;
  /** The percentage rule where nothing measures noise (5). */
  fallbackPct?: number;
  /** An interval wider than this, in % of the base, cannot see a change worth judging (10). */
  noiseLimitPct?: number;
  /** A change must also exceed this, in % of the base (1), or in points for a share (1). */
  minEffectPct?: number;
  /** Bootstrap resamples (1,000) and seed (1). */
  iterations?: number;
  seed?: number;
}

export const VERDICT_DEFAULTS = {
  fwerPct: 5,
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
  /** The base figure: a history's or blocks' geometric mean, a document's repeats' median, or its value. */
  base: number | null;
  base_n: number;
  /** The head figure: its blocks' geometric mean, its repeats' median, or its value; null when it has none. */
  head: number | null;
  head_n: number;
  /** The change in % of the base (null: a zero or missing base). */
  delta_pct: number | null;
  /** A share (error rate, SLO pass): the change in percentage points. */
  delta_pp: number | null;
  /** The two-sided interval on the change: in % of the base, or in points for a share. */
  interval_pct: [number, number] | null;
  interval_pp: [number, number] | null;
  /** The runs' noise (coefficient of variation, %), where 2+ runs give one. */
  noise_pct: number | null;
  method: Method;
  /** What the method counts as one independent observation. */
  independent: Unit | null;
  verdict: Verdict;
  /** Why a row is not judged, has no baseline, or regressed without a value. */
  reason: string | null;
  /** In the gate: decides the pull request. */
  gated: boolean;
  /** The gate judged it (its verdict is the gate's: one-sided, family-wise), not only its own interval. */
  decided: boolean;
  /** Gated rows: the smallest regression the evidence could detect at 80 % power (% or points). */
  detectable: number | null;
  /** The rule that judged the row (`+10%`, `t-test`, `off`). */
  rule: string;
  severity: Severity;
  /**
   * Its parts on each side, where both have them (row-splits.ts): TTFT's queue, prefill and
   * client from the server's per-request timings, else the server's mean phases from /metrics.
   */
  split?: { part: string; base: number; head: number }[];
  /** Where `split` comes from. */
  split_source?: SplitSource;
}

export interface VerdictSummary {
  rows: VerdictRow[];
  counts: Record<Verdict, number>;
  rules: string;
  gate: GateOutcome & { text: string };
  base_runs: number;
  head_runs: number;
  base_kind: Evidence["kind"];
  /** Base runs left out of a history, each with why (invalid, an outlier, before a change point). */
  excluded: { run: string; reason: string }[];
  /** What differs between the base's environment and the head's (driver, server version, ...). */
  environment: EnvChange[];
  /** `--consistency` on both sides: how many of the fixed prompts the head answered differently. */
  consistency: ConsistencyDiff | null;
  /** Informational rows judged by an interval, and how many of them chance alone would flag. */
  chance_flags: { rows: number; expected: number };
  /** Why there is no baseline at all, when there is none (another workload, no runs yet). */
  baseline_note: string | null;
}

export type Opts = Required<Omit<VerdictOptions, "rules" | "gate">>;
