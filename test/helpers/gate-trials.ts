/**
 * Pull requests through the one engine on the CI-noise model (ci-noise.ts): for one kind of
 * evidence, how often an unchanged PR fails the gate (its false-fail rate), how often it carries
 * any flagged row, and how often a PR with a given regression fails it (power). Each trial draws
 * its own base (a history, a base job, or an A/B job) and judges one unchanged head and one head
 * per regression against it. Seeded. Used by bench/verdict.ts and the gate's unit test.
 */
import type { LevelResult, ResultDocument } from "../../src/schema/v1.ts";
import { compareDocuments, type Side } from "../../src/shared/comparison.ts";
import { mean, stddev, tQuantile } from "../../src/shared/statistics.ts";
import {
  abDocument,
  type Change,
  historyDocuments,
  jobEffect,
  NO_CHANGE,
  type NoiseModel,
  repeatsDocument,
  rng,
  runDocument,
} from "./ci-noise.ts";

/** "one" (one run each side), "history N", "repeats N" (each side a job of N repeats), "ab N" (pairs). */
export type EvidenceKind = "one" | `history ${number}` | `repeats ${number}` | `ab ${number}`;

export interface Regression {
  name: string;
  change: Change;
}

export const REGRESSIONS: readonly Regression[] = [5, 10, 20].flatMap((pct) => [
  { name: `output tok/s −${pct} %`, change: { ttft: 0, tput: pct / 100 } },
  { name: `TTFT +${pct} %`, change: { ttft: pct / 100, tput: 0 } },
]);

export interface CellRates {
  trials: number;
  /** Unchanged PRs whose gate failed. */
  falseFail: number;
  /** Unchanged PRs with any row flagged (regressed or improved), gated or not. */
  anyFlagged: number;
  /** Per regression: PRs whose gate failed. */
  power: Record<string, number>;
  /** Per regression and gated measure: PRs whose gate failed on a row of that measure. */
  powerBy: Record<string, Record<string, number>>;
  /**
   * Per regression and measure: PRs in which that measure's all-levels row alone, tested one-sided
   * at 5 % with nothing else in the family, would have failed: the ceiling of any gate that holds
   * its false-fail rate at 5 % over more than that one row (history and A/B evidence only).
   */
  ceiling: Record<string, Record<string, number>>;
  /** Unchanged PRs by the gate's status. */
  status: Record<string, number>;
}

const n = (kind: string) => Number(kind.split(" ")[1]);

/** One trial's base and a head maker for this kind of evidence. */
function trialOf(
  r: () => number,
  m: NoiseModel,
  kind: EvidenceKind,
): (change: Change) => { bases: Side[]; head: Side } {
  if (kind === "one") {
    const base = runDocument(r, m, jobEffect(r, m), NO_CHANGE);
    return (change) => ({
      bases: [{ id: "base", doc: base }],
      head: { id: "head", doc: runDocument(r, m, jobEffect(r, m), change) },
    });
  }
  if (kind.startsWith("history")) {
    const hist = historyDocuments(r, m, n(kind));
    return (change) => ({
      bases: hist,
      head: { id: "head", doc: runDocument(r, m, jobEffect(r, m), change) },
    });
  }
  if (kind.startsWith("repeats")) {
    const base = repeatsDocument(r, m, n(kind), NO_CHANGE);
    return (change) => ({
      bases: [{ id: "base", doc: base }],
      head: { id: "head", doc: repeatsDocument(r, m, n(kind), change) },
    });
  }
  // A/B: each PR is its own job, base and head blocks together.
  return (change) => ({
    bases: [],
    head: { id: "head", doc: abDocument(r, m, n(kind), change) } as { id: string; doc: ResultDocument },
  });
}

export function cellRates(
  m: NoiseModel,
  kind: EvidenceKind,
  o: { trials: number; seed: number; regressions?: readonly Regression[]; iterations?: number },
): CellRates {
  const r = rng(o.seed);
  const regs = o.regressions ?? REGRESSIONS;
  const out: CellRates = {
    trials: o.trials,
    falseFail: 0,
    anyFlagged: 0,
    power: {},
    powerBy: {},
    ceiling: {},
    status: {},
  };
  for (const g of regs) {
    out.power[g.name] = 0;
    out.powerBy[g.name] = Object.fromEntries(GATED.map((x) => [x, 0]));
    out.ceiling[g.name] = Object.fromEntries(GATED.map((x) => [x, 0]));
  }
  const opts = { iterations: o.iterations ?? 1000 };
  for (let t = 0; t < o.trials; t++) {
    const pr = trialOf(r, m, kind);
    const null0 = pr(NO_CHANGE);
    const s = compareDocuments(null0.bases, null0.head, opts);
    out.status[s.gate.status] = (out.status[s.gate.status] ?? 0) + 1;
    if (s.gate.status === "failed") out.falseFail++;
    if (s.rows.some((x) => x.verdict === "regressed" || x.verdict === "improved")) out.anyFlagged++;
    for (const g of regs) {
      const p = pr(g.change);
      const gate = compareDocuments(p.bases, p.head, opts).gate;
      if (gate.status === "failed") out.power[g.name]!++;
      for (const x of GATED) {
        if (gate.failed.some((k) => k.endsWith(`\u0000${x}`))) out.powerBy[g.name]![x]!++;
        if (aloneFails(p.bases, p.head, x)) out.ceiling[g.name]![x]!++;
      }
    }
  }
  return out;
}

/** The gated ratio measures whose power the bench reports. */
export const GATED = ["output_tok_s", "ttft_p50_ms", "ttft_p95_ms"] as const;

/** A run's all-levels figure of a measure: the geometric mean over its levels (shared/all-levels.ts). */
function allLevels(levels: readonly LevelResult[], measure: (typeof GATED)[number]): number {
  const v = (l: LevelResult) =>
    measure === "output_tok_s" ? l.output_tok_s : measure === "ttft_p50_ms" ? l.ttft_ms.p50! : l.ttft_ms.p95!;
  return mean(levels.map((l) => Math.log(v(l))));
}

/**
 * Whether one all-levels row, alone, fails a one-sided 5 % t-test in its bad direction: a history's
 * prediction t (df n − 1), or an A/B job's paired t over its pairs (df pairs − 1). An independent
 * computation from the documents, not the engine's.
 */
function aloneFails(bases: readonly Side[], head: Side, measure: (typeof GATED)[number]): boolean {
  const bad = measure === "output_tok_s" ? -1 : 1;
  const ab = head.doc.ab;
  if (ab) {
    const d = ab.pairs.map(
      (p) =>
        bad * (allLevels(ab.blocks[p.head]!.levels, measure) - allLevels(ab.blocks[p.base]!.levels, measure)),
    );
    const se = stddev(d) / Math.sqrt(d.length);
    return se > 0 && mean(d) / se > tQuantile(0.95, d.length - 1);
  }
  if (bases.length < 2) return false;
  const b = bases.map((x) => allLevels(x.doc.levels, measure));
  const se = stddev(b) * Math.sqrt(1 + 1 / b.length);
  return (
    se > 0 && (bad * (allLevels(head.doc.levels, measure) - mean(b))) / se > tQuantile(0.95, b.length - 1)
  );
}
